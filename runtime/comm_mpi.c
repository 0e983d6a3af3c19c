/* comm_mpi.c: under construction */
typedef int comm_mpi_placeholder_;
