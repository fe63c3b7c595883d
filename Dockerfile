# syntax=docker/dockerfile:1
# Portcullis gateway image. Two stages: the build stage compiles TypeScript with the full
# dependency tree; the runtime stage holds production dependencies and compiled output only,
# and runs as the unprivileged `node` user.
#
#   docker build -t portcullis .
#   docker run --rm -v "$PWD/gateway.json:/etc/portcullis/gateway.json:ro" portcullis
#
# The same image runs the demo upstream servers (dist/demo/servers/*), which docker-compose.yml uses.

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build

FROM node:20-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
# Compiled gateway and demo servers only (dist/ also holds tests, fixtures and benchmarks).
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/demo ./dist/demo
# Shipped policies, loadable by name ("policy": "strict"); found by walking up from dist/src/policy.
COPY policies ./policies
# Files stay root-owned and read-only to the process that runs.
USER node
EXPOSE 8787
# Liveness of the gateway's own listener (port of the config below); no curl in the image.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8787/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["--config", "/etc/portcullis/gateway.json"]
