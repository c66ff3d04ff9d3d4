// Both ported loaders in one program: each table loaded once (the implementation of each in this file), its
// report printed when a required entry is missing, the call sites run.
#include <cstdio>
#define MOMO_IMPLEMENTATION
#include "momo.h"
#define FREY_IMPLEMENTATION
#include "frey.h"

int momo_sites(const momo_table *t, bool run_all);
int frey_sites(const frey_table *t, bool run_all);

int main() {
    const momo_table *m = momo_get();
    const frey_table *f = frey_get();
    if (momo_status() != MOMO_OK || frey_status() != FREY_OK) {
        std::fputs(momo_report(m), stdout);
        std::fputs(frey_report(f), stdout);
        return 10;
    }
    std::printf("momo %d frey %d\n", momo_sites(m, false), frey_sites(f, false));
    return 0;
}
