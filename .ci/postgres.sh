# shellcheck shell=bash
#
# Starts a throwaway PostgreSQL cluster for the tests. Source it from bash:
#
#   source .ci/postgres.sh        # starts the cluster, exports the variables below
#   go test -race ./postgres/
#   postgres_stop                 # or let the EXIT trap do it
#
# It exports
#   CUSTODY_TEST_POSTGRES     a DSN of the cluster's "postgres" database; the
#                             tests create and drop a database per test in it
#   CUSTODY_TEST_PG_RESTART   a command line that restarts the cluster (the
#                             restart-under-load test runs it)
# and defines postgres_stop, which stops the cluster and removes its files.
# The stop is also chained onto the shell's EXIT trap, after any trap that was
# already set.
#
# If CUSTODY_TEST_POSTGRES is already set, that server is used and nothing is
# started. If initdb and pg_ctl are missing, Debian's postgresql package is
# installed (needs root). As root the cluster runs as the "postgres" user; as
# anyone else it runs as the current user.
#
# The cluster is for tests only: fsync is off unless CUSTODY_PG_FSYNC=on
# (set it when measuring write throughput).

_custody_pg_bindir() {
	local d
	for d in /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			printf '%s\n' "$d"
		fi
	done | sort -V | tail -n 1
}

# _custody_pg_as runs a command as the cluster's owner.
_custody_pg_as() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

_custody_pg_port_free() {
	! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

postgres_start() {
	if [ -n "${CUSTODY_TEST_POSTGRES:-}" ]; then
		echo "postgres.sh: using the server in CUSTODY_TEST_POSTGRES" >&2
		return 0
	fi
	local bindir
	bindir=$(_custody_pg_bindir)
	if [ -z "$bindir" ]; then
		echo "postgres.sh: installing PostgreSQL (apt-get install postgresql)" >&2
		if ! DEBIAN_FRONTEND=noninteractive apt-get update -qq ||
			! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; then
			echo "postgres.sh: could not install postgresql" >&2
			return 1
		fi
		bindir=$(_custody_pg_bindir)
		if [ -z "$bindir" ]; then
			echo "postgres.sh: postgresql is installed but no initdb/pg_ctl under /usr/lib/postgresql/*/bin" >&2
			return 1
		fi
	fi
	if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd --system --home-dir /var/lib/postgresql --shell /bin/bash postgres || return 1
	fi
	# As root the cluster's files must be reachable by the postgres user, so
	# they go under /tmp whatever TMPDIR says.
	local dir tmp=${TMPDIR:-/tmp}
	if [ "$(id -u)" = 0 ]; then
		tmp=/tmp
	fi
	dir=$(mktemp -d "$tmp/custody-pg.XXXXXX") || return 1
	chmod 755 "$dir"
	if [ "$(id -u)" = 0 ]; then
		chown postgres: "$dir" || return 1
	fi
	if ! _custody_pg_as "$bindir/initdb" -A trust -U postgres -E UTF8 --locale=C.UTF-8 -D "$dir/data" >"$dir/initdb.log" 2>&1; then
		echo "postgres.sh: initdb failed:" >&2
		cat "$dir/initdb.log" >&2
		rm -rf "$dir"
		return 1
	fi
	local fsync=${CUSTODY_PG_FSYNC:-off}
	local port tries=0 started=
	while [ $tries -lt 20 ]; do
		tries=$((tries + 1))
		port=$((20000 + RANDOM % 40000))
		_custody_pg_port_free "$port" || continue
		if _custody_pg_as "$bindir/pg_ctl" -w -t 60 -D "$dir/data" -l "$dir/log" start \
			-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 -c fsync=$fsync -c synchronous_commit=$fsync -c full_page_writes=$fsync" \
			>/dev/null; then
			started=1
			break
		fi
	done
	if [ -z "$started" ]; then
		echo "postgres.sh: the cluster did not start; its log:" >&2
		cat "$dir/log" >&2 2>/dev/null
		rm -rf "$dir"
		return 1
	fi
	_CUSTODY_PG_DIR=$dir
	_CUSTODY_PG_BIN=$bindir
	export CUSTODY_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
	if [ "$(id -u)" = 0 ]; then
		export CUSTODY_TEST_PG_RESTART="runuser -u postgres -- $bindir/pg_ctl -w -t 60 -D $dir/data -l $dir/log -m fast restart"
	else
		export CUSTODY_TEST_PG_RESTART="$bindir/pg_ctl -w -t 60 -D $dir/data -l $dir/log -m fast restart"
	fi
	# Chain the stop onto the EXIT trap, keeping whatever trap was set.
	local prev=
	_custody_pg_trap_cmd() { prev=${3:-}; }
	eval "_custody_pg_trap_cmd $(trap -p EXIT)"
	unset -f _custody_pg_trap_cmd
	if [ -n "$prev" ]; then
		# shellcheck disable=SC2064
		trap -- "postgres_stop; $prev" EXIT
	else
		trap -- postgres_stop EXIT
	fi
	echo "postgres.sh: PostgreSQL $("$bindir/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port (data in $dir)" >&2
}

# postgres_stop stops the throwaway cluster and removes its files. It is safe
# to call more than once.
postgres_stop() {
	if [ -z "${_CUSTODY_PG_DIR:-}" ]; then
		return 0
	fi
	_custody_pg_as "$_CUSTODY_PG_BIN/pg_ctl" -w -D "$_CUSTODY_PG_DIR/data" -m fast stop >/dev/null 2>&1 || true
	rm -rf "$_CUSTODY_PG_DIR"
	_CUSTODY_PG_DIR=
	unset CUSTODY_TEST_POSTGRES CUSTODY_TEST_PG_RESTART
}

postgres_start
