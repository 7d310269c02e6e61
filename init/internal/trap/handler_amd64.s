#include "textflag.h"

// handler is entered by the kernel on the thread's signal stack, with DI the
// signal, SI its siginfo and DX the ucontext, and returns to the restorer.
// A fault the kernel raised (code > 0) of a chained signal goes on to the
// runtime's handler, with the registers as the kernel set them; any other
// instance is written to the pipe (a SIGCHLD only when none is pending), or,
// when the pipe is full, counted in lost.
TEXT ·handler(SB),NOSPLIT|NOFRAME,$0
	MOVL	8(SI), AX	// si_code
	CMPL	AX, $0
	JLE	queue
	MOVQ	·chained(SB), AX
	BTQ	DI, AX
	JCC	queue
	LEAQ	·previous(SB), AX
	MOVQ	(AX)(DI*8), AX
	JMP	AX
queue:
	CMPL	DI, $17	// SIGCHLD
	JNE	write
	MOVL	$1, AX
	XCHGL	AX, ·childPending(SB)
	TESTL	AX, AX
	JNZ	done
write:
	MOVL	·writeFd(SB), DI
	MOVL	$128, DX
	MOVL	$1, AX	// write(2); SI is the siginfo
	SYSCALL
	CMPQ	AX, $0
	JGE	done
	// The pipe is full: count the instance in lost[signo], set lostAny,
	// and write a wake (both atomic instructions are full barriers).
	MOVL	0(SI), DI	// si_signo
	LEAQ	·lost(SB), AX
	MOVL	$1, DX
	LOCK
	XADDL	DX, (AX)(DI*4)
	MOVL	$1, AX
	XCHGL	AX, ·lostAny(SB)
	MOVL	·writeFd(SB), DI
	LEAQ	·wake(SB), SI
	MOVL	$128, DX
	MOVL	$1, AX	// write(2)
	SYSCALL
done:
	RET

// func handlerAddr() uintptr
TEXT ·handlerAddr(SB),NOSPLIT,$0-8
	MOVQ	$·handler(SB), AX
	MOVQ	AX, ret+0(FP)
	RET
