/*
 * The table of every MPI 4.1 C function, generated into src/binding/stubs.c
 * by tools/gen_api.py from src/binding/api.txt. Used by mpiinfo --functions.
 */
#ifndef DCFA_BINDING_API_TABLE_H
#define DCFA_BINDING_API_TABLE_H

struct dcfa_api_entry {
    const char *name;   /* "MPI_Send" */
    void *stub;         /* the "not implemented" stub */
    void *impl;         /* PMPI_X as resolved by the linker */
};

extern const struct dcfa_api_entry dcfa_api_table[];
extern const int dcfa_api_count;

/* 1 if a real PMPI_X replaced the stub of dcfa_api_table[i], else 0 */
int dcfa_api_implemented(int i);

#endif /* DCFA_BINDING_API_TABLE_H */
