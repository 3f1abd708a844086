# Production image: builds the native SQLite driver from source (no prebuilt
# binaries are downloaded) and runs the compiled service.
FROM node:20-bookworm-slim AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts ./scripts
COPY prisma ./prisma
COPY prisma.config.ts ./
RUN npm ci
COPY . .
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8000
COPY --from=build /app /app
RUN mkdir -p /app/data && chown node /app/data
EXPOSE 8000
USER node
CMD ["node", "dist/src/main.js"]
