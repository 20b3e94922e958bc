/* The session FSM (src/fsm/session_fsm.cc) and the batch gate (src/fsm/batch_gate.cc) as
 * Promela inlines over global state. Included by session.pml (verified) and tables.pml (which
 * prints what these inlines compute for every input; tests/model compares that, row for row,
 * with what the C++ computes). Change the C++ or these inlines and the comparison fails.
 * Abstracted away: tool names, times, pending recoveries and the blocked-write counter (all
 * telemetry; the table checks that no verdict depends on the counter). Scratch variables are
 * `hidden` (not part of the state vector): every inline runs inside one d_step/atomic. */

/* SessionState, numbered as the C++ enum (kWriting = 2 is never entered and not modelled). */
#define S_RESOLVING 0
#define S_READING   1
#define S_VERIFYING 3

/* ToolKind and MutationTarget, numbered as the C++ enums. */
#define K_RESOLVE    0
#define K_READ       1
#define K_WRITE      2
#define K_USER_INPUT 3
#define M_NONE         0
#define M_PULSE_STATE  1
#define M_INFRA        2

/* FsmEffect. */
#define E_READ  0
#define E_WRITE 1
#define E_NONE  2

/* Verdicts: allowed, or blocked with reason R1 (no validated target), R2 (previous write
 * unverified), R3 (final answer about an unverified write). */
#define V_ALLOW 0
#define V_R1    1
#define V_R2    2
#define V_R3    3

/* Persistent session fields (SessionSnapshot minus names and times). */
byte fsm_st = S_RESOLVING;
bit  fsm_raw = 0;    /* read_after_write */
bit  fsm_wrote = 0;  /* wrote_this_episode */

/* EffectOf(InvocationClass). */
inline effect_of(kind, mut, eff) {
  if
  :: mut == M_PULSE_STATE -> eff = E_NONE
  :: mut == M_NONE && (kind == K_RESOLVE || kind == K_READ) -> eff = E_READ
  :: mut == M_NONE && kind == K_USER_INPUT -> eff = E_NONE
  :: else -> eff = E_WRITE
  fi
}

/* SessionFsm::GateWrite as seen from state `sim`. */
inline fsm_gate_write(sim, v) {
  if
  :: (sim) == S_READING -> v = V_ALLOW
  :: (sim) == S_RESOLVING -> v = V_R1
  :: (sim) == S_VERIFYING -> v = V_R2
  :: else -> v = V_R1
  fi
}

/* SessionFsm::CanExecute (loop API): only writes are gated. */
inline fsm_can_execute(eff, v) {
  if
  :: (eff) == E_WRITE -> fsm_gate_write(fsm_st, v)
  :: else -> v = V_ALLOW
  fi
}

/* SessionFsm::RecordRead. */
inline fsm_record_read(is_evidence) {
  if
  :: fsm_st == S_RESOLVING -> fsm_st = S_READING
  :: else -> skip
  fi;
  if
  :: (is_evidence) && fsm_st == S_VERIFYING -> fsm_raw = 1
  :: else -> skip
  fi
}

/* SessionFsm::OnToolSuccess(kWrite). */
inline fsm_record_write() {
  fsm_st = S_VERIFYING;
  fsm_wrote = 1;
  fsm_raw = 0
}

/* SessionFsm::CompleteVerification. */
inline fsm_complete_verification() {
  if
  :: fsm_st == S_VERIFYING && fsm_raw -> fsm_st = S_READING; fsm_raw = 0
  :: else -> skip
  fi
}

/* SessionFsm::OnToolSucceeded(invocation, tool, mutation_dispatched). */
inline fsm_on_succeeded(eff, dispatched) {
  if
  :: (eff) == E_NONE -> skip
  :: (eff) == E_WRITE && (dispatched) -> fsm_record_write()
  :: (eff) == E_WRITE && !(dispatched) -> skip
  :: (eff) == E_READ -> fsm_record_read(1); fsm_complete_verification()
  fi
}

/* SessionFsm::OnSelfVerified. */
inline fsm_self_verified() {
  fsm_record_read(1);
  fsm_complete_verification()
}

/* SessionFsm::CanFinalAnswer. */
inline fsm_can_final_answer(v) {
  if
  :: fsm_st == S_RESOLVING || fsm_st == S_READING -> v = V_ALLOW
  :: fsm_st == S_VERIFYING && fsm_raw -> v = V_ALLOW
  :: else -> v = V_R3
  fi
}

/* SessionFsm::OnTargetEstablished. */
inline fsm_target_established() {
  if
  :: fsm_st == S_RESOLVING -> fsm_st = S_READING
  :: else -> skip
  fi
}

/* SessionFsm::Reset. */
inline fsm_reset() {
  fsm_st = S_RESOLVING;
  fsm_wrote = 0;
  fsm_raw = 0
}

/* SessionFsm::ResetKeepProgress. */
inline fsm_reset_keep_progress() {
  if
  :: fsm_st == S_VERIFYING -> fsm_st = S_READING
  :: else -> skip
  fi;
  fsm_wrote = 0;
  fsm_raw = 0
}

/* ---- BatchGate: one provider turn of up to BG_MAX calls. ---- */
#define BG_MAX 3
/* Outcome of an admitted call (BatchGate::Outcome). */
#define O_NOT_REPORTED  0
#define O_SUCCEEDED     1
#define O_DISPATCHED    2
#define O_SELF_VERIFIED 3

byte bg_n = 0;
byte bg_eff[BG_MAX];
byte bg_verdict[BG_MAX];
byte bg_outcome[BG_MAX];
bit  bg_admitted_write = 0;
hidden byte bg_sim;
hidden byte bg_i;
hidden byte bg_v;

/* BatchGate::Admit over bg_eff[0 .. bg_n-1]: fills bg_verdict and bg_admitted_write. */
inline bg_admit() {
  bg_sim = fsm_st;
  bg_admitted_write = 0;
  bg_i = 0;
  do
  :: bg_i < bg_n ->
     if
     :: bg_eff[bg_i] == E_WRITE ->
        fsm_gate_write(bg_sim, bg_v);
        if
        :: bg_v == V_ALLOW -> bg_sim = S_VERIFYING; bg_admitted_write = 1
        :: else -> skip
        fi
     :: else -> bg_v = V_ALLOW
     fi;
     bg_verdict[bg_i] = bg_v;
     bg_outcome[bg_i] = O_NOT_REPORTED;
     bg_i++
  :: else -> break
  od;
  bg_sim = 0; bg_i = 0; bg_v = 0
}

/* BatchGate::OnSucceeded(idx, dispatched); a blocked or already reported call changes nothing
 * (FailedPrecondition in the C++). */
inline bg_on_succeeded(idx, dispatched) {
  if
  :: bg_verdict[idx] == V_ALLOW && bg_outcome[idx] == O_NOT_REPORTED ->
     if
     :: bg_eff[idx] == E_READ && bg_admitted_write -> fsm_record_read(0)
     :: else -> fsm_on_succeeded(bg_eff[idx], dispatched)
     fi;
     if
     :: bg_eff[idx] == E_WRITE && (dispatched) -> bg_outcome[idx] = O_DISPATCHED
     :: else -> bg_outcome[idx] = O_SUCCEEDED
     fi
  :: else -> skip
  fi
}

/* BatchGate::OnSelfVerified(idx): only a write reported as dispatched, once. */
inline bg_on_self_verified(idx) {
  if
  :: bg_outcome[idx] == O_DISPATCHED -> fsm_self_verified(); bg_outcome[idx] = O_SELF_VERIFIED
  :: else -> skip
  fi
}

/* Clears the turn so that finished turns do not multiply states. */
inline bg_clear() {
  bg_i = 0;
  do
  :: bg_i < BG_MAX -> bg_eff[bg_i] = 0; bg_verdict[bg_i] = 0; bg_outcome[bg_i] = 0; bg_i++
  :: else -> break
  od;
  bg_i = 0;
  bg_n = 0;
  bg_admitted_write = 0
}
