# Production image: builds the native SQLite driver from source (no prebuilt
# binaries are downloaded) and runs the compiled service.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# The workspaces' manifests: npm ci installs what the lockfile lists for them too.
COPY packages/sdk/package.json ./packages/sdk/
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-bookworm-slim
WORKDIR /app
# The embedded SQLite database lives in a volume, so it outlives the container;
# DATABASE_URL=postgresql://… uses PostgreSQL instead.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8000 DATABASE_URL=file:/data/agents.db
COPY --from=build /app /app
RUN mkdir -p /data && chown node /data
VOLUME /data
EXPOSE 8000
USER node
# Healthy while /readyz answers 200: the database answers and no migration is pending.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "scripts/healthcheck.mjs"]
CMD ["node", "dist/src/main.js"]
