// Times one command as a whole process for scripts/bench/startup.py: wall, user + system CPU and peak RSS.
//
//   spawn-time CMD [ARG...]      prints "WALL_S CPU_S MAXRSS_KIB" on standard error
//
// vfork + exec from this small process, so the child's peak RSS is its own (a fork from Python
// would count Python's pages), and wait4's CPU times in microseconds (GNU time rounds to 10 ms).
// The command's standard output and error go to /dev/null; its exit status is returned.
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: spawn-time CMD [ARG...]\n"); return 2; }
    int null = open("/dev/null", O_WRONLY);
    int err = dup(2);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = vfork();
    if (pid == 0) {
        dup2(null, 1);
        dup2(null, 2);
        execvp(argv[1], argv + 1);
        _exit(127);
    }
    if (pid < 0) { perror("vfork"); return 2; }
    int status = 0;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) { perror("wait4"); return 2; }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double cpu = (double)(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + 1e-6 * (double)(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
    dprintf(err, "%.6f %.6f %ld\n", wall, cpu, usage.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}
