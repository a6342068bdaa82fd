# Multi-stage: build a wheel, install it into a slim runtime as a non-root user.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY proto proto
COPY scoring scoring
COPY api api
COPY collector collector
RUN pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 badge
COPY --from=build /wheels /wheels
RUN pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER badge
WORKDIR /home/badge
# Where a mounted volume keeps the signing key (docker-compose.yml): made
# here so a new named volume is the badge user's.
RUN mkdir -m 0700 /home/badge/keys
ENV BADGE_DATABASE_URL=sqlite:////home/badge/badge-collector.db
EXPOSE 4317 4318
CMD ["badge-collector", "serve", "--host", "0.0.0.0"]
