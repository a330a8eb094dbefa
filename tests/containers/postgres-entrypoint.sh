#!/bin/sh
# First start: a cluster whose superuser and database are POSTGRES_USER and POSTGRES_DB, with a
# password required from the network, as the official image makes it.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/pwfile
    initdb --username="$POSTGRES_USER" --pwfile=/tmp/pwfile --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm /tmp/pwfile
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\";" \
        | postgres --single -D "$PGDATA" postgres >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/tmp
