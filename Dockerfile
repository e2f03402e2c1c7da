# fastsvc as a container image: `svc serve` on the manifest mounted at /etc/fastsvc.
#   docker build -t fastsvc .
#   docker run --rm -p 8080:8080 -e SVC_TOKEN=... -v "$PWD/svc.yaml:/etc/fastsvc/svc.yaml:ro" fastsvc
# The build runs the npm scripts CI runs (npm ci, npm run build); the runtime image holds only
# production dependencies, dist/ and schema/, owned by root and run as the unprivileged `node` user.

# --- build: dev dependencies, the TypeScript build, then production dependencies only ---
FROM node:20-bookworm AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds from sources not copied yet; better-sqlite3's own install
# script (its native addon) is then run by itself.
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json ./
COPY schema ./schema
COPY src ./src
COPY scripts/bundle-cli.mjs ./scripts/
RUN npm run build && npm prune --omit=dev

# --- runtime ---
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema ./schema
USER node
EXPOSE 8080
# No curl in slim images: Node's own fetch asks /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/cli.js", "serve"]
CMD ["/etc/fastsvc/svc.yaml"]
