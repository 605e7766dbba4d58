#!/bin/sh
# The CI examples for users (ci/github-actions.yml, ci/gitlab-ci.yml) run
# what .ci/run runs: the same commands (.ci/run's `step` lines), in the same
# order; both parse as YAML, and both keep the regression run's report
# (from the directory .ci/run's regress step writes).  A mutant example with
# a step dropped must be caught.
. "$(dirname "$0")/../lib/tap.sh"
root=$(cd "$(dirname "$0")/../.." && pwd)
tap_tmp ci-examples
echo "1..5"
check() { # check CI_RUN GITHUB GITLAB: prints what differs, exit 1 if anything
	python3 - "$@" <<'PYEOF'
import re, sys, yaml
run, gh, gl = sys.argv[1:4]
steps = [m.group(1).strip() for m in re.finditer(r"^\s*step (.+)$", open(run).read(), re.M)]
out = re.search(r"IBC_REGRESS_OUT=(\S+)", " ".join(steps))
bad = []
g = yaml.safe_load(open(gh))
job = next(iter(g["jobs"].values()))
ghs = [s["run"].strip() for s in job["steps"] if "run" in s and s.get("name", "") != "git"]
if ghs != steps:
    bad.append("github-actions.yml runs %s, .ci/run %s" % (ghs, steps))
l = yaml.safe_load(open(gl))
glj = next(v for k, v in l.items() if isinstance(v, dict) and "script" in v)
gls = [s.strip() for s in glj["script"]]
if gls != steps:
    bad.append("gitlab-ci.yml runs %s, .ci/run %s" % (gls, steps))
if out is None:
    bad.append(".ci/run's regress step names no IBC_REGRESS_OUT")
else:
    rep = out.group(1) + "/report.html"
    upl = [p for s in job["steps"] for p in str(s.get("with", {}).get("path", "")).split()]
    if rep not in upl:
        bad.append("github-actions.yml does not upload %s" % rep)
    if rep not in glj.get("artifacts", {}).get("paths", []):
        bad.append("gitlab-ci.yml does not keep %s" % rep)
for b in bad:
    print("# " + b)
print("# .ci/run: " + " | ".join(steps))
sys.exit(1 if bad else 0)
PYEOF
}
if ! python3 -c 'import yaml' 2>/dev/null; then
	for i in 1 2 3 4 5; do echo "ok $i # SKIP python3-yaml missing"; done
	exit 0
fi
python3 -c "import yaml; yaml.safe_load(open('$root/ci/github-actions.yml'))"; ok $? "ci/github-actions.yml parses"
python3 -c "import yaml; yaml.safe_load(open('$root/ci/gitlab-ci.yml'))"; ok $? "ci/gitlab-ci.yml parses"
check "$root/.ci/run" "$root/ci/github-actions.yml" "$root/ci/gitlab-ci.yml"
ok $? "both run .ci/run's steps, in its order, and keep the regression report"
grep -q 'make regress' "$root/.ci/run" && grep -q 'make check-rxe' "$root/.ci/run"
ok $? ".ci/run has the check-rxe and regress steps"
grep -v 'make check-rxe' "$root/ci/gitlab-ci.yml" >"$tmp/gl.yml"
sed 's/make regress/make run/' "$root/ci/github-actions.yml" >"$tmp/gh.yml"
! check "$root/.ci/run" "$tmp/gh.yml" "$tmp/gl.yml" >/dev/null
ok $? "a dropped step and a changed step are caught"
