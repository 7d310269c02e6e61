#include "textflag.h"

// handler is entered by the kernel on the thread's signal stack, with R0 the
// signal, R1 its siginfo and R2 the ucontext, and returns to LR (the
// kernel's sigreturn trampoline). A fault the kernel raised (code > 0) of a
// chained signal goes on to the runtime's handler, with the registers as
// the kernel set them; any other instance is written to the pipe (a SIGCHLD
// only when none is pending), or, when the pipe is full, counted in lost.
TEXT ·handler(SB),NOSPLIT|NOFRAME,$0
	MOVW	8(R1), R3	// si_code, sign-extended
	CMP	$0, R3
	BLE	queue
	MOVD	·chained(SB), R4
	LSR	R0, R4, R4
	TBZ	$0, R4, queue
	MOVD	$·previous(SB), R4
	MOVD	(R4)(R0<<3), R4
	JMP	(R4)
queue:
	CMP	$17, R0	// SIGCHLD
	BNE	write
	MOVD	$·childPending(SB), R4
	MOVW	$1, R5
swap:
	LDAXRW	(R4), R6
	STLXRW	R5, (R4), R7
	CBNZ	R7, swap
	CBNZ	R6, done
write:
	MOVW	·writeFd(SB), R0
	MOVD	$128, R2
	MOVD	$64, R8	// write(2); R1 is the siginfo
	SVC
	CMP	$0, R0
	BGE	done
	// The pipe is full: count the instance in lost[signo], set lostAny
	// (release stores: the count is seen first), and write a wake.
	MOVWU	0(R1), R3	// si_signo
	MOVD	$·lost(SB), R4
	ADD	R3<<2, R4, R4
count:
	LDAXRW	(R4), R5
	ADDW	$1, R5, R5
	STLXRW	R5, (R4), R6
	CBNZ	R6, count
	MOVD	$·lostAny(SB), R4
	MOVW	$1, R5
	STLRW	R5, (R4)
	MOVW	·writeFd(SB), R0
	MOVD	$·wake(SB), R1
	MOVD	$128, R2
	MOVD	$64, R8	// write(2)
	SVC
done:
	RET

// func handlerAddr() uintptr
TEXT ·handlerAddr(SB),NOSPLIT,$0-8
	MOVD	$·handler(SB), R0
	MOVD	R0, ret+0(FP)
	RET
