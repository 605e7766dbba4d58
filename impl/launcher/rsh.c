/* The remote shell: its check, {host} expansion and argv (see rsh.h). */
#include "launcher/rsh.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *shell_quote(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *q = malloc(4 * n + 3);

	if (q == NULL)
		return NULL;
	q[o++] = '\'';
	for (i = 0; i < n; i++) {
		if (s[i] == '\'') {
			memcpy(q + o, "'\\''", 4);
			o += 4;
		} else {
			q[o++] = s[i];
		}
	}
	q[o++] = '\'';
	q[o] = '\0';
	return q;
}

int ibc_launch_rsh_check(const char *rsh, char *err, size_t errlen)
{
	if (rsh != NULL && (strcmp(rsh, "local") == 0 || strcmp(rsh, "ssh") == 0 || strstr(rsh, "{host}") != NULL))
		return IBC_OK;
	snprintf(err, errlen, "--rsh '%s' is neither local, ssh nor a template with {host}", rsh ? rsh : "");
	return IBC_ERR_INVAL;
}

int ibc_launch_rsh_subst(const char *text, const char *host, char **out)
{
	size_t n = 0, hl;
	const char *p, *at;
	char *r, *o;

	*out = NULL;
	if (text == NULL || host == NULL)
		return IBC_ERR_INVAL;
	hl = strlen(host);
	for (p = text; (at = strstr(p, "{host}")) != NULL; p = at + 6)
		n++;
	r = malloc(strlen(text) + n * hl + 1);
	if (r == NULL)
		return IBC_ERR_NOMEM;
	for (o = r, p = text; (at = strstr(p, "{host}")) != NULL; p = at + 6) {
		memcpy(o, p, (size_t)(at - p));
		o += at - p;
		memcpy(o, host, hl);
		o += hl;
	}
	strcpy(o, p);
	*out = r;
	return IBC_OK;
}

int ibc_launch_rsh_argv(const char *rsh, const char *host, char *const *cmd, char ***out)
{
	size_t ncmd = 0, n = 0, cap;
	char **v;

	while (cmd[ncmd])
		ncmd++;
	cap = ncmd + 64;
	v = calloc(cap, sizeof(*v));
	if (v == NULL)
		return IBC_ERR_NOMEM;
	if (strcmp(rsh, "local") == 0) {
		/* nothing in front */
	} else if (strcmp(rsh, "ssh") == 0) {
		size_t len = 1, i;
		char *joined;

		v[n++] = strdup("ssh");
		v[n++] = strdup("-o");
		v[n++] = strdup("BatchMode=yes");
		v[n++] = strdup("-x");
		v[n++] = strdup(host);
		for (i = 0; i < ncmd; i++)
			len += 4 * strlen(cmd[i]) + 3;
		joined = malloc(len + 64);
		if (joined == NULL)
			goto err_free_v;
		joined[0] = '\0';
		for (i = 0; i < ncmd; i++) {
			char *q = shell_quote(cmd[i]);

			if (q == NULL) {
				free(joined);
				goto err_free_v;
			}
			if (i > 0)
				strcat(joined, " ");
			strcat(joined, q);
			free(q);
		}
		v[n++] = joined;
		*out = v;
		return IBC_OK;
	} else {
		char *t = strdup(rsh), *save = NULL, *w;

		if (t == NULL)
			goto err_free_v;
		/* a word left NULL (no memory) is caught below */
		for (w = strtok_r(t, " \t", &save); w && n < 60; w = strtok_r(NULL, " \t", &save))
			(void)ibc_launch_rsh_subst(w, host, &v[n++]);
		free(t);
	}
	for (size_t i = 0; i < ncmd; i++)
		v[n++] = strdup(cmd[i]);
	for (size_t i = 0; i < n; i++)
		if (v[i] == NULL)
			goto err_free_v;
	*out = v;
	return IBC_OK;

err_free_v:
	for (size_t i = 0; i < cap; i++)
		free(v[i]);
	free(v);
	return IBC_ERR_NOMEM;
}
