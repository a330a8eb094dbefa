"""The web container's health check: the login page answers 200 through gunicorn and Django.

It asks as a TLS proxy in front would (X-Forwarded-Proto: https, so production's HTTPS redirect does
not answer instead) and for a host the settings allow (the first of ALLOWED_HOSTS), so it checks the
same path a user's request takes.
"""

import os
import sys
import urllib.error
import urllib.request


def main() -> int:
    hosts = [host.strip() for host in os.environ.get("ALLOWED_HOSTS", "").split(",") if host.strip()]
    host = hosts[0] if hosts else "localhost"
    if host == "*":
        host = "localhost"
    elif host.startswith("."):  # a domain and its subdomains
        host = "health" + host
    request = urllib.request.Request(
        "http://127.0.0.1:8000/accounts/login/", headers={"Host": host, "X-Forwarded-Proto": "https"}
    )
    try:
        with urllib.request.urlopen(request, timeout=8) as response:
            status = response.status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError as error:
        print(f"The web process does not answer: {error}", file=sys.stderr)
        return 1
    if status != 200:
        print(f"The login page answered {status}, not 200", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
