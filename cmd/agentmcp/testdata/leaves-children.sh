#!/bin/sh
# A stdio MCP server started through a shell, as npx, uvx and sh -c start
# theirs: the shell runs the server ("$@") and leaves two processes that
# ignore SIGTERM and never read stdin, one in its process group and one in
# a session of its own. Their pids go to $LEFT_PIDS_FILE.
trap '' TERM
sleep 600 </dev/null >/dev/null 2>&1 &
echo $! >>"$LEFT_PIDS_FILE"
setsid sleep 600 </dev/null >/dev/null 2>&1 &
echo $! >>"$LEFT_PIDS_FILE"
"$@"
