/* The remote shell (impl/launcher/rsh.c): the --rsh check, the {host}
 * expansion and the argv for local, ssh and a template; bad input refused
 * with a message naming it. */
#include "core/status.h"
#include "launcher/rsh.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static char *joined(char **v)
{
	static char buf[1024];
	size_t i;

	buf[0] = '\0';
	for (i = 0; v[i] != NULL; i++) {
		if (i > 0)
			strcat(buf, "|");
		strcat(buf, v[i]);
	}
	return buf;
}

static void argv_free(char **v)
{
	size_t i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

static void argv_is(const char *rsh, const char *want)
{
	char *cmd[] = { "prog", "it's", NULL }, **v = NULL;

	tap_is_int(ibc_launch_rsh_argv(rsh, "h1", cmd, &v), IBC_OK, "argv of '%s'", rsh);
	tap_is_str(v != NULL ? joined(v) : "", want, "... %s", want);
	argv_free(v);
}

int main(void)
{
	char err[160] = "", *s = NULL;

	tap_plan_none();
	tap_is_int(ibc_launch_rsh_check("local", err, sizeof(err)), IBC_OK, "local is a remote shell");
	tap_is_int(ibc_launch_rsh_check("ssh", err, sizeof(err)), IBC_OK, "ssh is one");
	tap_is_int(ibc_launch_rsh_check("ip netns exec {host}", err, sizeof(err)), IBC_OK, "a template with {host}");
	tap_is_int(ibc_launch_rsh_check("ip netns exec", err, sizeof(err)), IBC_ERR_INVAL, "no {host}: refused");
	tap_is_str(err, "--rsh 'ip netns exec' is neither local, ssh nor a template with {host}", "... saying why");
	tap_is_int(ibc_launch_rsh_check("{hots}", err, sizeof(err)), IBC_ERR_INVAL, "a misspelt {host}: refused");

	tap_is_int(ibc_launch_rsh_subst("ip netns exec {host}", "ibc-h1", &s), IBC_OK, "expand");
	tap_is_str(s, "ip netns exec ibc-h1", "... {host} replaced");
	free(s);
	tap_is_int(ibc_launch_rsh_subst("{host}:{host}", "\"$h\"", &s), IBC_OK, "two {host}");
	tap_is_str(s, "\"$h\":\"$h\"", "... both replaced");
	free(s);
	tap_is_int(ibc_launch_rsh_subst("-x", "h", &s), IBC_OK, "no {host}");
	tap_is_str(s, "-x", "... copied");
	free(s);
	tap_is_int(ibc_launch_rsh_subst("{host", "h", &s), IBC_OK, "an unclosed {host");
	tap_is_str(s, "{host", "... left as it is");
	free(s);
	tap_is_int(ibc_launch_rsh_subst("a {host}", NULL, &s), IBC_ERR_INVAL, "no host: refused");
	tap_ok(s == NULL, "... and nothing returned");
	tap_is_int(ibc_launch_rsh_subst(NULL, "h", &s), IBC_ERR_INVAL, "no text: refused");

	argv_is("local", "prog|it's");
	argv_is("ssh", "ssh|-o|BatchMode=yes|-x|h1|'prog' 'it'\\''s'");
	argv_is("ip netns exec {host}", "ip|netns|exec|h1|prog|it's");
	argv_is("sh  -c-{host}-x\t{host}", "sh|-c-h1-x|h1|prog|it's");
	return tap_done();
}
