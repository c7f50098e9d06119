/**
 * Route schemas compiled the first time a request needs them rather than at start. Compiling every route's
 * validators (ajv) and response serializers (fast-json-stringify) was a sixth of a start's CPU, for routes a process
 * may never serve; each costs a millisecond or two on its first request instead. `compileAll` compiles whatever is
 * left, so a test still proves that every schema compiles.
 */
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { ValidateFunction } from 'ajv';

type Serializer = (data: unknown) => string;
type SerializerFactory = (
  externalSchemas: unknown,
  options: unknown,
) => (route: { schema?: unknown; method: string; url: string; httpStatus: string }) => Serializer;

export interface LazySchemas {
  /** A validator compiled on first use. Fastify reads `errors` off the function it holds, so they are copied. */
  validator(compile: () => ValidateFunction): ValidateFunction;
  /** Fastify's own serializer factory (shared schemas and options as it passes them), compiling on first use. */
  serializerFactory: SerializerFactory;
  /** Compiles every schema not compiled yet; answers how many there were. */
  compileAll(): number;
}

export function createLazySchemas(): LazySchemas {
  const pending = new Set<() => void>();
  const eager = SerializerSelector() as unknown as SerializerFactory;

  function once<T>(compile: () => T): () => T {
    let compiled: T | undefined;
    const get = () => {
      if (compiled === undefined) {
        compiled = compile();
        pending.delete(get);
      }
      return compiled;
    };
    pending.add(get);
    return get;
  }

  return {
    validator(compile) {
      const compiled = once(compile);
      const validate = ((data: unknown) => {
        const real = compiled();
        const valid = real(data);
        validate.errors = real.errors;
        return valid;
      }) as ValidateFunction;
      validate.errors = null;
      return validate;
    },
    serializerFactory(externalSchemas, options) {
      const compileFor = eager(externalSchemas, options);
      return (route) => {
        const compiled = once(() => compileFor(route));
        return (data) => compiled()(data);
      };
    },
    compileAll() {
      const left = [...pending];
      for (const compile of left) compile();
      return left.length;
    },
  };
}
