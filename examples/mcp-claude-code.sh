#!/usr/bin/env bash
# Claude Code: the workspace's tools in every session (MCP over HTTP). Set MCP_URL, WORKSPACE_API_KEY and WORKSPACE_ID.
set -euo pipefail
: "${MCP_URL:=http://localhost:8080/mcp}" "${WORKSPACE_API_KEY:=any-key-works-locally}" "${WORKSPACE_ID:=demo}"

claude mcp add --transport http workspace "$MCP_URL" \
  --header "Authorization: Bearer $WORKSPACE_API_KEY" \
  --header "Service-Workspace: $WORKSPACE_ID"
