# syntax=docker/dockerfile:1
# Portcullis gateway image. Two stages: the build stage compiles TypeScript with the full
# dependency tree; the runtime stage holds production dependencies and compiled output only,
# and runs as the unprivileged `node` user.
#
#   docker build -t portcullis .
#   docker run --rm -p 127.0.0.1:8787:8787 \
#     -v "$PWD/gateway.json:/etc/portcullis/gateway.json:ro" \
#     -v portcullis-home:/home/node portcullis
#
# It listens on 0.0.0.0:$PORTCULLIS_PORT (8787) so that a published port reaches it; these two
# variables take the place of the config's listen.host and listen.port. Under the policy's bind
# rule a non-loopback listener needs inbound authentication (the config's "auth" block) or a policy
# with "acknowledgedNoAuth": true (behind a proxy that authenticates); otherwise the gateway
# refuses to start and says so. `npx -y` servers download into $HOME/.npm: with --read-only,
# give /home/node a volume (as above) or a tmpfs. docs/deployment.md has the details.
#
# The same image runs the demo upstream servers (dist/demo/servers/*), which docker-compose.yml uses.

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build

FROM node:20-slim AS runtime
ENV NODE_ENV=production PORTCULLIS_HOST=0.0.0.0 PORTCULLIS_PORT=8787
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
# Liveness of the gateway's own listener, on the port it was told (PORTCULLIS_PORT); no curl in the image.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORTCULLIS_PORT}/healthz`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["--config", "/etc/portcullis/gateway.json"]
