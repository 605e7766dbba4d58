/* ibchar-launch inside a Slurm allocation (slurm.h). */
#include "launcher/slurm.h"

#include "core/log.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ibc_launch_slurm_tasks_parse(const char *text, int *slots, int cap)
{
	const char *s = text;
	int n = 0;

	if (text == NULL || *text == '\0')
		return IBC_ERR_INVAL;
	while (*s) {
		char *e;
		long v = strtol(s, &e, 10), rep = 1, i;

		if (e == s || v < 1)
			return IBC_ERR_INVAL;
		s = e;
		if (s[0] == '(' && s[1] == 'x') {
			rep = strtol(s + 2, &e, 10);
			if (e == s + 2 || rep < 1 || *e != ')')
				return IBC_ERR_INVAL;
			s = e + 1;
		}
		for (i = 0; i < rep; i++) {
			if (n == cap)
				return IBC_ERR_NOMEM;
			slots[n++] = (int)v;
		}
		if (*s == ',')
			s++;
		else if (*s != '\0')
			return IBC_ERR_INVAL;
	}
	return n;
}

int ibc_launch_slurm_hosts(char **hosts)
{
	const char *list = getenv("SLURM_JOB_NODELIST"), *tpn = getenv("SLURM_TASKS_PER_NODE");
	char line[256], *out = NULL;
	size_t used = 0, cap = 0;
	int *slots = NULL, nslots, i = 0, rc = IBC_OK;
	FILE *p;

	*hosts = NULL;
	if (list == NULL)
		return IBC_ERR_NOTFOUND;
	if (tpn == NULL)
		tpn = "1";
	slots = calloc(65536, sizeof(*slots));
	if (slots == NULL)
		return IBC_ERR_NOMEM;
	nslots = ibc_launch_slurm_tasks_parse(tpn, slots, 65536);
	if (nslots < 0) {
		ibc_error("launch: SLURM_TASKS_PER_NODE '%s' is not Slurm's format", tpn);
		free(slots);
		return IBC_ERR_INVAL;
	}
	/* Slurm's own expansion of its host list syntax (ibc-h[1-4,7]) */
	setenv("IBC_SLURM_NODELIST", list, 1);
	p = popen("scontrol show hostnames \"$IBC_SLURM_NODELIST\"", "r");
	if (p == NULL) {
		ibc_error("launch: cannot run scontrol to expand SLURM_JOB_NODELIST");
		free(slots);
		return IBC_ERR_IO;
	}
	while (rc == IBC_OK && fgets(line, sizeof(line), p) != NULL) {
		size_t l = strcspn(line, "\r\n");

		line[l] = '\0';
		if (l == 0)
			continue;
		if (used + l + 16 > cap) {
			char *t = realloc(out, cap = 2 * cap + l + 64);

			if (t == NULL) {
				rc = IBC_ERR_NOMEM;
				break;
			}
			out = t;
		}
		used += (size_t)snprintf(out + used, cap - used, "%s%s:%d", used ? "," : "", line,
					 slots[i < nslots ? i : nslots - 1]);
		i++;
	}
	if (pclose(p) != 0 && rc == IBC_OK) {
		ibc_error("launch: scontrol show hostnames '%s' failed", list);
		rc = IBC_ERR_IO;
	}
	if (rc == IBC_OK && i == 0) {
		ibc_error("launch: SLURM_JOB_NODELIST '%s' names no host", list);
		rc = IBC_ERR_INVAL;
	}
	free(slots);
	if (rc != IBC_OK) {
		free(out);
		return rc;
	}
	*hosts = out;
	return IBC_OK;
}
