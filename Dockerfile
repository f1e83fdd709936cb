# One image for both processes (k8s/ picks the command): console `node scripts/serve-console.ts`,
# relay `node relay-service/src/main.ts`, migrations `node db/scripts/migrate.ts`.
# Server TypeScript runs unbuilt on Node 22+ (docs/decisions/001); only the console's Remix bundle is built.
FROM node:22-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY db/package.json db/
COPY proto/package.json proto/
COPY relay-service/package.json relay-service/
RUN npm install --no-audit --no-fund
COPY . .
RUN npx remix vite:build

FROM node:22-slim AS runtime
ENV NODE_ENV=production
# Outside a container every listener binds to loopback by default (ADR 034); in the container they must be
# reachable from other pods, which the k8s NetworkPolicies then restrict. INTERNAL_API_SECRET is not baked in.
ENV HOST=0.0.0.0 CONSOLE_GRPC_HOST=0.0.0.0 RELAY_HOST=0.0.0.0 RELAY_GRPC_HOST=0.0.0.0
WORKDIR /app
COPY package.json package-lock.json ./
COPY db/package.json db/
COPY proto/package.json proto/
COPY relay-service/package.json relay-service/
RUN npm install --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/build ./build
COPY app ./app
COPY db ./db
COPY proto ./proto
COPY relay-service ./relay-service
COPY scripts ./scripts
COPY server ./server
# The `node` user of the official image is uid 1000 (k8s runAsUser).
USER node
EXPOSE 3000 3001 50051 50052
CMD ["node", "scripts/serve-console.ts"]
