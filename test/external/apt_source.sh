# Sourced by the runners of test/external/: fetch a Debian source package with
# a private apt configuration (its own sources list -- a deb-src line for every
# archive/suite of /etc/apt/sources.list.d/debian.sources -- lists and cache
# under APTDIR), leaving the system's apt configuration and lists untouched.
#
#   apt_source APTDIR DESTDIR LOG PKG [PKG=VERSION-*]
# unpacks the package (the first of the names apt can fetch) into DESTDIR;
# returns non-zero, with LOG on stderr, when it cannot.
apt_source() {
    local apt=$1 dest=$2 log=$3
    shift 3
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$dest"
    local src=/etc/apt/sources.list.d/debian.sources
    : > "$apt/sources.list"
    if [ -r "$src" ]; then
        awk '
            function flush() {
                if (uris != "" && suites != "" && types ~ /deb/) {
                    n = split(uris, u, " "); m = split(suites, s, " ")
                    for (i = 1; i <= n; i++) for (j = 1; j <= m; j++)
                        printf "deb-src %s%s %s %s\n", opt, u[i], s[j], comps
                }
                types = uris = suites = comps = opt = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^Types:/      { sub(/^Types:[ \t]*/, "");      types = $0 }
            /^URIs:/       { sub(/^URIs:[ \t]*/, "");       uris = $0 }
            /^Suites:/     { sub(/^Suites:[ \t]*/, "");     suites = $0 }
            /^Components:/ { sub(/^Components:[ \t]*/, ""); comps = $0 }
            /^Signed-By:/  { sub(/^Signed-By:[ \t]*/, "");  opt = "[signed-by=" $0 "] " }
            END { flush() }
        ' "$src" > "$apt/sources.list"
    fi
    if [ ! -s "$apt/sources.list" ]; then
        echo "deb-src http://deb.debian.org/debian bookworm main" > "$apt/sources.list"
    fi
    local aptopts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=-"
                   -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
                   -o "APT::Sandbox::User=root" -o "Debug::NoLocking=1")
    command -v dpkg-source > /dev/null || {
        echo "error: apt-get source needs dpkg-dev (apt-get install -y dpkg-dev)" >&2; return 2; }
    apt-get -q "${aptopts[@]}" update > "$log" 2>&1 || { cat "$log" >&2; return 2; }
    local p
    for p in "$@"; do
        (cd "$dest" && apt-get -q "${aptopts[@]}" source "$p") >> "$log" 2>&1 && return 0
    done
    cat "$log" >&2
    return 2
}
