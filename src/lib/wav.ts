/**
 * 16-bit PCM audio: WAV files in and out, a band-limited resampler, and the two-channel call recording
 * (agent on the left, callee on the right). Samples are Int16Array, interleaved when there are two channels.
 */

export interface PcmAudio {
  /** Interleaved frames: L R L R … for two channels. */
  samples: Int16Array;
  sampleRate: number;
  channels: 1 | 2;
}

const HEADER_BYTES = 44;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export class WavFormatError extends Error {}

function checkFormat(sampleRate: number, channels: number) {
  if (!Number.isInteger(sampleRate) || sampleRate < 1 || sampleRate > 384_000) {
    throw new WavFormatError(`sample rate must be an integer from 1 to 384000 Hz, got ${sampleRate}`);
  }
  if (channels !== 1 && channels !== 2) throw new WavFormatError(`channels must be 1 or 2, got ${channels}`);
}

export function durationMs(audio: PcmAudio): number {
  return (audio.samples.length / audio.channels / audio.sampleRate) * 1000;
}

/** A canonical 44-byte-header RIFF/WAVE file: PCM, 16 bits, little-endian. */
export function encodeWav(audio: PcmAudio): Buffer {
  const { samples, sampleRate, channels } = audio;
  checkFormat(sampleRate, channels);
  if (samples.length % channels !== 0) throw new WavFormatError('two-channel samples must come in L/R pairs');
  const dataBytes = samples.length * 2;
  if (HEADER_BYTES - 8 + dataBytes > 0xffff_ffff) throw new WavFormatError('audio too long for a WAV file (4 GiB)');
  const file = Buffer.alloc(HEADER_BYTES + dataBytes);
  file.write('RIFF', 0, 'ascii');
  file.writeUInt32LE(HEADER_BYTES - 8 + dataBytes, 4);
  file.write('WAVE', 8, 'ascii');
  file.write('fmt ', 12, 'ascii');
  file.writeUInt32LE(16, 16); // fmt chunk size
  file.writeUInt16LE(1, 20); // PCM
  file.writeUInt16LE(channels, 22);
  file.writeUInt32LE(sampleRate, 24);
  file.writeUInt32LE(sampleRate * channels * 2, 28); // byte rate
  file.writeUInt16LE(channels * 2, 32); // block align
  file.writeUInt16LE(16, 34); // bits per sample
  file.write('data', 36, 'ascii');
  file.writeUInt32LE(dataBytes, 40);
  if (LITTLE_ENDIAN) {
    Buffer.from(samples.buffer, samples.byteOffset, dataBytes).copy(file, HEADER_BYTES);
  } else {
    for (let i = 0; i < samples.length; i++) file.writeInt16LE(samples[i]!, HEADER_BYTES + i * 2);
  }
  return file;
}

/**
 * Reads a 16-bit PCM WAV (mono or stereo), skipping chunks it does not need (LIST, fact…). A data size
 * of 0 or 0xFFFFFFFF, as streaming encoders write before they know the length, means "to the end".
 */
export function decodeWav(input: Uint8Array): PcmAudio {
  const file = Buffer.from(input.buffer, input.byteOffset, input.byteLength);
  if (file.length < 12 || file.toString('ascii', 0, 4) !== 'RIFF' || file.toString('ascii', 8, 12) !== 'WAVE') {
    throw new WavFormatError('not a RIFF/WAVE file');
  }
  let format: { channels: number; sampleRate: number; bits: number; encoding: number } | null = null;
  let offset = 12;
  while (offset + 8 <= file.length) {
    const id = file.toString('ascii', offset, offset + 4);
    const size = file.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > file.length) throw new WavFormatError('truncated fmt chunk');
      let encoding = file.readUInt16LE(body);
      // WAVE_FORMAT_EXTENSIBLE carries the real format in its sub-format GUID.
      if (encoding === 0xfffe && size >= 40) encoding = file.readUInt16LE(body + 24);
      format = {
        encoding,
        channels: file.readUInt16LE(body + 2),
        sampleRate: file.readUInt32LE(body + 4),
        bits: file.readUInt16LE(body + 14),
      };
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('data chunk before the fmt chunk');
      if (format.encoding !== 1 || format.bits !== 16) {
        throw new WavFormatError(`only 16-bit PCM is supported (format ${format.encoding}, ${format.bits} bits)`);
      }
      checkFormat(format.sampleRate, format.channels);
      const available = file.length - body;
      const length = size === 0 || size === 0xffff_ffff || size > available ? available : size;
      const frameBytes = 2 * format.channels;
      const usable = length - (length % frameBytes);
      const samples = new Int16Array(usable / 2);
      for (let i = 0; i < samples.length; i++) samples[i] = file.readInt16LE(body + i * 2);
      return { samples, sampleRate: format.sampleRate, channels: format.channels as 1 | 2 };
    }
    offset = body + size + (size % 2); // chunks are padded to an even length
  }
  throw new WavFormatError('no data chunk');
}

/** Mono from stereo by averaging the two channels; mono is returned as it is. */
export function toMono(audio: PcmAudio): PcmAudio {
  if (audio.channels === 1) return audio;
  const mono = new Int16Array(audio.samples.length / 2);
  for (let i = 0; i < mono.length; i++) mono[i] = (audio.samples[2 * i]! + audio.samples[2 * i + 1]!) >> 1;
  return { samples: mono, sampleRate: audio.sampleRate, channels: 1 };
}

const SINC_ZERO_CROSSINGS = 16;

function clamp16(value: number): number {
  return value > 32767 ? 32767 : value < -32768 ? -32768 : Math.round(value);
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

interface ResamplingKernel {
  /** Taps per output sample; output n reads input[floor(n * from / to) - (taps / 2 - 1) + j]. */
  taps: number;
  /** The weights of each phase (phase = n * from mod to, in steps of gcd), normalized to unity gain. */
  weights: Float64Array;
  phaseStep: number;
}

const kernels = new Map<string, ResamplingKernel>();

/**
 * The weights for one pair of rates, computed once: the fractional position of output n in the input
 * repeats every to / gcd(from, to) outputs (160 phases for 22,050 -> 8,000 Hz), so every output is a
 * plain dot product.
 */
function kernelFor(fromRate: number, toRate: number): ResamplingKernel {
  const id = `${fromRate}:${toRate}`;
  const cached = kernels.get(id);
  if (cached) return cached;
  const cutoff = Math.min(1, toRate / fromRate) * 0.95; // a fraction of the input's Nyquist frequency
  const halfWidth = SINC_ZERO_CROSSINGS / cutoff; // in input samples
  const half = Math.ceil(halfWidth);
  const taps = 2 * half;
  const phaseStep = gcd(fromRate, toRate);
  const phases = toRate / phaseStep;
  const weights = new Float64Array(phases * taps);
  for (let phase = 0; phase < phases; phase++) {
    const fraction = (phase * phaseStep) / toRate;
    let sum = 0;
    for (let j = 0; j < taps; j++) {
      const distance = fraction - (j - (half - 1)); // center minus the tap's input position
      if (Math.abs(distance) >= halfWidth) continue;
      const angle = Math.PI * distance * cutoff;
      const sinc = angle === 0 ? 1 : Math.sin(angle) / angle;
      const u = distance / halfWidth;
      const weight = sinc * (0.42 + 0.5 * Math.cos(Math.PI * u) + 0.08 * Math.cos(2 * Math.PI * u)); // Blackman window
      weights[phase * taps + j] = weight;
      sum += weight;
    }
    for (let j = 0; j < taps; j++) weights[phase * taps + j]! /= sum;
  }
  const kernel = { taps, weights, phaseStep };
  // Only a few pairs of rates ever meet (engine rates to 8 or 16 kHz); a stray pair is not kept.
  if (kernels.size < 32 && weights.length <= 1 << 20) kernels.set(id, kernel);
  return kernel;
}

/**
 * Band-limited resampling of mono samples: a Blackman-windowed sinc whose cutoff sits 5% below the
 * lower of the two Nyquist frequencies, so going down to 8 kHz filters out what a phone line cannot
 * carry instead of folding it back as noise. 16 zero crossings each side; past the ends the input
 * counts as silence.
 */
export function resample(input: Int16Array, fromRate: number, toRate: number): Int16Array {
  checkFormat(fromRate, 1);
  checkFormat(toRate, 1);
  if (fromRate === toRate) return input.slice();
  const { taps, weights, phaseStep } = kernelFor(fromRate, toRate);
  const half = taps / 2;
  const output = new Int16Array(Math.round((input.length * toRate) / fromRate));
  for (let n = 0; n < output.length; n++) {
    const position = n * fromRate; // in units of 1 / toRate input samples
    const base = Math.floor(position / toRate) - (half - 1);
    const row = ((position % toRate) / phaseStep) * taps;
    let sum = 0;
    const first = Math.max(0, -base);
    const last = Math.min(taps, input.length - base);
    for (let j = first; j < last; j++) sum += input[base + j]! * weights[row + j]!;
    output[n] = clamp16(sum);
  }
  return output;
}

/** A piece of mono speech placed on the call's timeline. */
export interface RecordingClip {
  pcm: Int16Array;
  sampleRate: number;
  /** Where the clip starts, in milliseconds from the start of the call. */
  atMs: number;
}

export interface StereoRecordingInput {
  /** 8000 or 16000. */
  sampleRate: 8000 | 16000;
  /** Left channel. */
  agent: readonly RecordingClip[];
  /** Right channel. */
  callee: readonly RecordingClip[];
  /** The recording's length; by default it ends with the last clip. */
  durationMs?: number;
}

/**
 * The call recording: agent clips on the left, callee clips on the right, each resampled to the
 * recording's rate and placed at its offset. Overlapping clips on one side are mixed (and clipped to 16 bits).
 */
export function mixStereoRecording(input: StereoRecordingInput): PcmAudio {
  const { sampleRate } = input;
  if (sampleRate !== 8000 && sampleRate !== 16000)
    throw new WavFormatError(`a recording is 8000 or 16000 Hz, got ${sampleRate}`);
  const placed = ([0, 1] as const).flatMap((channel) =>
    (channel === 0 ? input.agent : input.callee).map((clip) => {
      if (!Number.isFinite(clip.atMs) || clip.atMs < 0)
        throw new WavFormatError(`a clip offset must be >= 0 ms, got ${clip.atMs}`);
      return {
        channel,
        start: Math.round((clip.atMs * sampleRate) / 1000),
        pcm: resample(clip.pcm, clip.sampleRate, sampleRate),
      };
    }),
  );
  const endFrame = Math.max(0, ...placed.map((clip) => clip.start + clip.pcm.length));
  const frames = input.durationMs === undefined ? endFrame : Math.round((input.durationMs * sampleRate) / 1000);
  const mix = new Int32Array(frames * 2);
  for (const clip of placed) {
    const count = Math.min(clip.pcm.length, frames - clip.start);
    for (let i = 0; i < count; i++) mix[(clip.start + i) * 2 + clip.channel]! += clip.pcm[i]!;
  }
  const samples = new Int16Array(mix.length);
  for (let i = 0; i < mix.length; i++) samples[i] = clamp16(mix[i]!);
  return { samples, sampleRate, channels: 2 };
}
