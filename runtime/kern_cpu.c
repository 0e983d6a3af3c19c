/* kern_cpu.c: under construction */
typedef int kern_cpu_placeholder_;
