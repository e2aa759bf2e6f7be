#!/usr/bin/env bash
# Runs the built CPU image the way compose.yaml does, against a Redis you name: one `api` container and one
# `worker` container (host networking), submits examples/sample-page.png through the GraphQL API, and waits
# for the worker's markdown. Exits non-zero on any failure and removes its containers either way.
#
#   docker build -f infra/Dockerfile.cpu -t specula-cpu .
#   bash infra/smoke-cpu-image.sh [redis://127.0.0.1:6379] [image]
set -euo pipefail
redis=${1:-redis://127.0.0.1:6379}
image=${2:-specula-cpu}
prefix="smoke-$$"
api_port=${SMOKE_API_PORT:-4600}
worker_port=${SMOKE_WORKER_PORT:-4601}
names=("specula-smoke-api-$$" "specula-smoke-worker-$$")
cleanup() {
  docker rm -f "${names[@]}" >/dev/null 2>&1 || true
  # The run's keys live under their own prefix; drop them where redis-cli is at hand (else retention does).
  if command -v redis-cli >/dev/null; then
    redis-cli -u "$redis" --scan --pattern "$prefix:*" | xargs -r redis-cli -u "$redis" del >/dev/null || true
  fi
}
trap cleanup EXIT
common=(--network host -e "SPECULA_REDIS_URL=$redis" -e "SPECULA_REDIS_PREFIX=$prefix" -e SPECULA_API_KEYS=smoke:smoke-key)
docker run -d --name "${names[0]}" "${common[@]}" -e PORT="$api_port" "$image" serve --role api >/dev/null
docker run -d --name "${names[1]}" "${common[@]}" -e SPECULA_WORKER_PORT="$worker_port" "$image" serve --role worker >/dev/null
wait_ready() {
  for _ in $(seq 1 60); do
    if curl -fsS "http://127.0.0.1:$1/readyz" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  echo "port $1 never became ready" >&2
  docker logs "${names[0]}" 2>&1 | tail -20 >&2
  docker logs "${names[1]}" 2>&1 | tail -20 >&2
  return 1
}
# The worker first: the api's /readyz waits for a live worker.
wait_ready "$worker_port"
wait_ready "$api_port"
gql() {
  curl -fsS "http://127.0.0.1:$api_port/graphql" -H 'content-type: application/json' -H 'authorization: Bearer smoke-key' --data-binary @-
}
b64=$(base64 -w0 examples/sample-page.png)
id=$(printf '{"query":"mutation($b:String!){createParseJob(input:{base64:$b,fileName:\\"sample-page.png\\"}){id status}}","variables":{"b":"%s"}}' "$b64" \
  | gql | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const r=JSON.parse(s);if(r.errors)throw new Error(JSON.stringify(r.errors));console.log(r.data.createParseJob.id)})')
echo "job $id submitted to the api container"
for _ in $(seq 1 180); do
  out=$(printf '{"query":"query($id:ID!){parseJob(id:$id){status markdown error{code message}}}","variables":{"id":"%s"}}' "$id" | gql)
  status=$(node -e 'const r=JSON.parse(process.argv[1]);console.log(r.data.parseJob.status)' "$out")
  case "$status" in
    SUCCEEDED)
      node -e 'const r=JSON.parse(process.argv[1]);const m=r.data.parseJob.markdown;if(!m||m.length<200)throw new Error("short markdown");console.log(m.slice(0,300))' "$out"
      echo "smoke test passed: the worker container read the page the api container queued"
      exit 0 ;;
    FAILED|CANCELLED) echo "job ended $status: $out" >&2; exit 1 ;;
  esac
  sleep 1
done
echo "job did not finish in 180 s" >&2
exit 1
