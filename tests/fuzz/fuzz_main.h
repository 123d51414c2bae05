/*
 * fuzz_main.h — the replay main() every fuzz target gets when it is built
 * without libFuzzer (JOBD_FUZZ_STANDALONE, the gcc builds): it runs
 * LLVMFuzzerTestOneInput once per file named on the command line, so a
 * target's committed corpus is a regression test with any compiler. Each
 * target includes this header once (it also declares the entry point).
 */
#ifndef JOBD_FUZZ_MAIN_H
#define JOBD_FUZZ_MAIN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#ifdef JOBD_FUZZ_STANDALONE
int
main(int argc, char **argv)
{
    /* libFuzzer's default -max_len is 4 KiB, but seeds may be larger. */
    static uint8_t buf[4 << 20];
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (f == NULL) {
            perror(argv[i]);
            return 1;
        }
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        /* Copied so that ASan sees a read past the input's end. */
        uint8_t *copy = malloc(n ? n : 1);
        if (copy == NULL)
            return 1;
        memcpy(copy, buf, n);
        LLVMFuzzerTestOneInput(copy, n);
        free(copy);
    }
    printf("%d inputs replayed\n", argc - 1);
    return 0;
}
#endif

#endif
