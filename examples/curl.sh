#!/usr/bin/env bash
# Plain and streamed completions with curl. Set ADAPTER_URL, WORKSPACE_API_KEY and WORKSPACE_ID.
set -euo pipefail
: "${ADAPTER_URL:=http://localhost:8080/v1}" "${WORKSPACE_API_KEY:=any-key-works-locally}" "${WORKSPACE_ID:=demo}"

curl -sS "$ADAPTER_URL/chat/completions" \
  -H "Authorization: Bearer $WORKSPACE_API_KEY" \
  -H "Service-Workspace: $WORKSPACE_ID" \
  -H "Content-Type: application/json" \
  -d '{"model": "ask", "messages": [{"role": "user", "content": "How does the adapter cite sources?"}]}'
echo

curl -sSN "$ADAPTER_URL/chat/completions" \
  -H "Authorization: Bearer $WORKSPACE_API_KEY" \
  -H "Service-Workspace: $WORKSPACE_ID" \
  -H "Content-Type: application/json" \
  -d '{"model": "reason", "stream": true, "stream_options": {"include_usage": true},
       "messages": [{"role": "user", "content": "How are streams ended when the adapter shuts down?"}]}'
