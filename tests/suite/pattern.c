/* The validation pattern of the suite driver (suite.h): what fill writes,
 * check accepts, and every kind of wrong byte it must count: a flipped
 * byte anywhere (also in a last partial word), a message of another source,
 * destination, iteration or index, a message shifted by a word. */
#include "suite/suite.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define BIG 4099

int main(void)
{
	static const size_t lens[] = { 0, 1, 7, 8, 9, 15, 16, 17, 4096, BIG };
	unsigned char *b = malloc(BIG + 8), *c = malloc(BIG + 8);
	uint64_t seed = ibc_suite_pattern_seed(0, 1, 10, 3);
	size_t i, k, first, fails;
	int ok;

	tap_plan(11);
	if (b == NULL || c == NULL)
		tap_bail_out("no memory");

	for (i = 0, ok = 1; i < sizeof(lens) / sizeof(lens[0]); i++) {
		memset(b, 0xee, BIG + 8);
		ibc_suite_pattern_fill(b, lens[i], seed);
		ok &= ibc_suite_pattern_check(b, lens[i], seed, NULL) == 0;
		ok &= b[lens[i]] == 0xee; /* not a byte past the end */
	}
	tap_ok(ok, "fill, then check: no wrong byte, none written past the end (lengths 0 .. %d)",
	       BIG);

	ibc_suite_pattern_fill(b, BIG, seed);
	for (k = 0, ok = 1; k < BIG; k++)
		ok &= b[k] == ibc_suite_pattern_byte(seed, k);
	tap_ok(ok, "pattern_byte gives fill's bytes");

	/* one byte flipped at every offset of a 17-byte message (two words and a tail) */
	for (k = 0, fails = 0; k < 17; k++) {
		ibc_suite_pattern_fill(b, 17, seed);
		b[k] ^= 0x5a;
		first = 99;
		if (ibc_suite_pattern_check(b, 17, seed, &first) != 1 || first != k)
			fails++;
	}
	tap_is_int((long long)fails, 0, "a byte flipped anywhere in 17 bytes: counted once, at its offset");

	ibc_suite_pattern_fill(b, BIG, seed);
	b[100] ^= 1;
	b[BIG - 1] ^= 0x80;
	first = 0;
	tap_ok(ibc_suite_pattern_check(b, BIG, seed, &first) == 2 && first == 100,
	       "two wrong bytes of %d counted, the first named", BIG);

	ibc_suite_pattern_fill(c, BIG, seed);
	tap_ok(ibc_suite_pattern_check(c, BIG, ibc_suite_pattern_seed(1, 0, 10, 3), NULL) > BIG / 2,
	       "another source's message fails (source and destination swapped)");
	tap_ok(ibc_suite_pattern_check(c, BIG, ibc_suite_pattern_seed(0, 2, 10, 3), NULL) > BIG / 2,
	       "another destination's fails");
	tap_ok(ibc_suite_pattern_check(c, BIG, ibc_suite_pattern_seed(0, 1, 9, 3), NULL) > BIG / 2,
	       "the last iteration's fails");
	tap_ok(ibc_suite_pattern_check(c, BIG, ibc_suite_pattern_seed(0, 1, 10, 4), NULL) > BIG / 2,
	       "the next message's fails");
	tap_ok(ibc_suite_pattern_check(c + 8, BIG - 8, seed, NULL) > (BIG - 8) / 2,
	       "a message shifted by one word fails");

	/* seeds of neighbouring messages all differ */
	{
		uint64_t s[2 * 2 * 4 * 4];
		int n = 0, j, dup = 0;

		for (int src = 0; src < 2; src++)
			for (int dst = 0; dst < 2; dst++)
				for (uint64_t it = 0; it < 4; it++)
					for (uint64_t m = 0; m < 4; m++)
						s[n++] = ibc_suite_pattern_seed(src, dst, it, m);
		for (i = 0; i < (size_t)n; i++)
			for (j = (int)i + 1; j < n; j++)
				dup += s[i] == s[j];
		tap_is_int(dup, 0, "64 neighbouring (source, destination, iteration, index) seeds differ");
	}

	memset(b, 0, 8);
	tap_ok(ibc_suite_pattern_check(b, 8, seed, NULL) > 0, "zeros are no message");
	free(b);
	free(c);
	return tap_done();
}
