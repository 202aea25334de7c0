/* hpc_sandbox.c - the helper's side of the isolation of third-party
 * libraries; see hpc_sandbox.h and hpc_remote.h. */
#define _GNU_SOURCE       /* gettid */
#include "config.h"
#include "hpc_sandbox.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static hpc_ctl *ctl;     /* set in the helper only */

void hpc_sandbox_note(const char *path)
{
    if (!ctl)
        return;
    g_strlcpy(ctl->member, path ? path : "", sizeof ctl->member);
}

/* Async-signal-safe: two stores, then the default action of the signal. */
static void on_crash(int sig)
{
    ctl->crash_tid = (int32_t)syscall(SYS_gettid);
    ctl->crash_sig = sig;
    signal(sig, SIG_DFL);
    raise(sig);
}

void hpc_sandbox_thread(void)
{
    stack_t ss = { .ss_size = 64u << 10 };
    ss.ss_sp = malloc(ss.ss_size);    /* lives as long as the thread */
    if (ss.ss_sp)
        sigaltstack(&ss, NULL);
}

void hpc_sandbox_enter(hpc_ctl *page)
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
    ctl = page;
    hpc_sandbox_thread();
    struct sigaction sa = { .sa_handler = on_crash, .sa_flags = SA_ONSTACK };
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < G_N_ELEMENTS(sigs); i++)
        sigaction(sigs[i], &sa, NULL);
}
