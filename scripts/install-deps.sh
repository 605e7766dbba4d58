#!/usr/bin/env bash
# install-deps.sh - install the Debian packages ibchar needs to build and test.
#
# Usage: scripts/install-deps.sh [--check] [--help] [PACKAGE...]
#   (no option)  install the missing packages (apt-get update once, only when
#                something is missing); silent when everything is present
#   --check      only report the missing packages; exit status 1 if any
#   PACKAGE...   work on these packages instead of ibchar's build/test list
#
# Idempotent.  Uses sudo when not run as root.  Packages for the Soft-RoCE
# guest (qemu, kernel image, ...) are installed by scripts/softroce-vm itself.
# IBC_DEPS_EXTRA="pkg ..." adds packages to the list.
set -euo pipefail

PKGS=(
	build-essential make gcc pkg-config git         # compiler, make, git describe
	libibverbs-dev librdmacm-dev rdma-core ibverbs-utils ibverbs-providers
	libhwloc-dev libcsv-dev
	libgsl-dev                                      # impl/logp: least-squares fits (gsl_multifit_nlinear)
	python3 python3-matplotlib                      # plots/
	python3-yaml                                    # tests/scripts/ci-examples.t
	openmpi-bin libopenmpi-dev mpich libmpich-dev   # host-MPI variants
	iproute2                                        # scripts/testhosts (netns)
	slurmctld slurmd slurm-client munge             # scripts/slurm-local: a real Slurm
	openssh-client openssh-server                   # testhosts ssh: the launcher's default rsh
	perl                                            # prove (TAP::Harness)
	chromium                                        # tests/tools/report.t: the report in a real browser
	procps                                          # ps/pkill used by tests
	clang                                           # tests/fuzz: libFuzzer harnesses (make fuzz)
)
# shellcheck disable=SC2206
[ -n "${IBC_DEPS_EXTRA:-}" ] && PKGS+=(${IBC_DEPS_EXTRA})

me=install-deps
usage() { sed -n '2,13s/^# \{0,1\}//p' "$0"; }

check_only=0
args=()
while (($#)); do
	case $1 in
	--check) check_only=1 ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "$me: unknown option '$1' (try --help)" >&2; exit 2 ;;
	*) args+=("$1") ;;
	esac
	shift
done
((${#args[@]})) && PKGS=("${args[@]}")

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "$me: dpkg-query not found: this script supports Debian/Ubuntu only;" \
		"install by hand: ${PKGS[*]}" >&2
	exit 1
fi

# One dpkg-query call for all packages (fast path: < 0.1 s when all present).
declare -A have=()
while read -r name status; do
	[ "$status" = "install ok installed" ] && have[$name]=1
done < <(dpkg-query -W -f='${Package} ${Status}\n' "${PKGS[@]}" 2>/dev/null || true)
# dpkg-query prints multi-arch packages as name:arch with ${binary:Package};
# with ${Package} it prints the bare name, which is what we compare against.

missing=()
for p in "${PKGS[@]}"; do
	[ -n "${have[$p]:-}" ] || missing+=("$p")
done
# de-duplicate (a package listed twice, e.g. via IBC_DEPS_EXTRA)
if ((${#missing[@]})); then
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | awk '!seen[$0]++')
fi

if ((check_only)); then
	if ((${#missing[@]})); then
		echo "$me: missing: ${missing[*]}"
		exit 1
	fi
	exit 0
fi

((${#missing[@]})) || exit 0

if [ "$(id -u)" = 0 ]; then
	SUDO=()
elif command -v sudo >/dev/null 2>&1; then
	SUDO=(sudo)
else
	echo "$me: need root or sudo to install: ${missing[*]}" >&2
	exit 1
fi

echo "$me: installing ${missing[*]}" >&2
log=$(mktemp "${TMPDIR:-/tmp}/ibchar-install-deps.XXXXXX")
if ! { "${SUDO[@]}" apt-get update -q &&
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
	tail -n 20 "$log" >&2
	echo "$me: apt-get failed to install: ${missing[*]} (full log: $log)" >&2
	exit 1
fi
rm -f "$log"

# Verify: a package apt-get could not configure must not pass silently.
if ! "$0" --check "${PKGS[@]}" >/dev/null; then
	echo "$me: still missing after apt-get: $("$0" --check "${PKGS[@]}" | sed 's/^[^:]*: missing: //')" >&2
	exit 1
fi
