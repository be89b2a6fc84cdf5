/* Every intra-communicator collective against a local reference, blocking forms: see coll_ref.h. */
#include "coll_ref.h"

int main(int argc, char **argv) { return cr_main(argc, argv, CR_BLOCKING); }
