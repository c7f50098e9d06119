# Parley: a multi-stage build; the image runs as the unprivileged user `node`.
# The steps after the FROM lines are scripts/container-steps.sh, which test/container.test.ts runs on the host.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY web ./web
RUN scripts/container-steps.sh build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATA_DIR=/data LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/web/dist ./web/dist
COPY --from=build /app/scripts/container-steps.sh /app/scripts/healthcheck.mjs /app/scripts/build.mjs ./scripts/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
# Node is PID 1's only child of note: exec form, no npm in between, so SIGTERM reaches it.
CMD ["node", "dist/main.js"]
