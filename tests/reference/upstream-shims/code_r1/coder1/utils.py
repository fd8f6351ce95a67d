# Reconstructed (see tests/reference/score_upstream.py): the two constants coder1/__init__.py and firejail_exec.py
# import from ganler/code-r1's coder1/utils.py, with the values
# ganler/code-r1@443f8da8 uses (30 s). That file also holds a `requests`-based helper for remote
# executors, unused on the firejail path and left out.
_ERROR_MSG_PREFIX = "Failed to execute program: "
_DEFAULT_TIMEOUT_SECONDS = 30
