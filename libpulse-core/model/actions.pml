/* The action lifecycle (src/actions/action_types.cc, action_transition.cc) as Promela inlines:
 * the state graph and the typed compare-and-swap every ActionStore commits (Validate, then the
 * compare, then the checks against the stored row, then the swap). Included by lifecycle.pml
 * (verified) and tables.pml (printed and compared with the C++ by tests/model).
 * Abstracted: one action record; its immutable identity is plan hash 1 (the only other hash,
 * 2, stands for any other plan); approvals are the decisions of two humans, H0 and H1. */

/* ActionState, numbered as the C++ enum. */
#define A_PLANNED   0
#define A_PENDING   1
#define A_APPROVED  2
#define A_REJECTED  3
#define A_EXPIRED   4
#define A_EXECUTING 5
#define A_COMPLETED 6
#define A_FAILED    7

#define A_TERMINAL(s) ((s) == A_REJECTED || (s) == A_EXPIRED || (s) == A_COMPLETED || (s) == A_FAILED)
#define A_CAN_EXPIRE(s) ((s) == A_PLANNED || (s) == A_PENDING || (s) == A_APPROVED)
#define A_HAS_RESULT(s) ((s) == A_COMPLETED || (s) == A_FAILED)
#define A_DECISION(s) ((s) == A_PENDING || (s) == A_APPROVED || (s) == A_REJECTED)

/* The lifecycle graph (IsLegalActionTransition). */
#define A_LEGAL(f, t) ( \
  ((f) == A_PLANNED && ((t) == A_EXECUTING || (t) == A_EXPIRED || (t) == A_FAILED)) || \
  ((f) == A_PENDING && ((t) == A_PENDING || (t) == A_APPROVED || (t) == A_REJECTED || \
                        (t) == A_EXPIRED)) || \
  ((f) == A_APPROVED && ((t) == A_EXECUTING || (t) == A_EXPIRED || (t) == A_FAILED)) || \
  ((f) == A_EXECUTING && ((t) == A_COMPLETED || (t) == A_FAILED)))

/* CAS results: applied; InvalidArgument (malformed transition); Aborted (the compare failed:
 * identity, state or revision); FailedPrecondition (a rule against the stored row). */
#define CAS_OK            0
#define CAS_INVALID       1
#define CAS_CONFLICT_HASH 2
#define CAS_CONFLICT_STATE 3
#define CAS_CONFLICT_REV  4
#define CAS_PRECONDITION  5

/* The stored record's mutable columns (identity: plan hash 1). */
byte act_st = A_PLANNED;
byte act_rev = 0;        /* decision_revision == number of decisions */
bit  act_result = 0;     /* a result is recorded */
byte act_dec[2];         /* per human: 0 none, 1 approved, 2 rejected */
byte act_dec_hash[2];    /* the plan hash each decision binds (0: none) */

/* The transition request (ActionTransition), abstracted. */
hidden byte rq_exp_mask;   /* expected states as a bit mask (1 << state) */
hidden byte rq_hash;       /* expected plan hash */
hidden byte rq_use_rev;    /* expected_decision_revision is set */
hidden byte rq_rev;        /* ... its value */
hidden byte rq_new;        /* new state */
hidden byte rq_new_rev;    /* new decision revision */
hidden byte rq_approval;   /* appends a decision */
hidden byte rq_actor;      /* ... by this human (0 or 1) */
hidden byte rq_outcome;    /* ... approved (1) or rejected (2) */
hidden byte rq_appr_hash;  /* ... binding this plan hash */
hidden byte rq_with_result;
hidden byte cas_i;
hidden byte cas_bad;

/* ActionStore::Transition: ValidateActionTransition, CheckCas, CheckTransitionAgainst,
 * ApplyActionTransition, in that order (the order of the in-memory and the SQL store). */
inline act_cas(res) {
  /* ValidateActionTransition */
  cas_bad = 0;
  cas_i = 0;
  do
  :: cas_i < 8 ->
     if
     :: (rq_exp_mask & (1 << cas_i)) != 0 && !A_LEGAL(cas_i, rq_new) -> cas_bad = 1
     :: else -> skip
     fi;
     cas_i++
  :: else -> break
  od;
  cas_i = 0;
  /* Promela's `if` picks any true guard, so each rule is its own if/else, in C++ order. */
  res = 255;
  if :: res == 255 && (rq_exp_mask == 0 || cas_bad) -> res = CAS_INVALID :: else -> skip fi;
  if :: res == 255 && rq_with_result != A_HAS_RESULT(rq_new) -> res = CAS_INVALID :: else -> skip fi;
  if :: res == 255 && rq_approval && !A_DECISION(rq_new) -> res = CAS_INVALID :: else -> skip fi;
  /* CheckCas */
  if :: res == 255 && rq_hash != 1 -> res = CAS_CONFLICT_HASH :: else -> skip fi;
  if :: res == 255 && (rq_exp_mask & (1 << act_st)) == 0 -> res = CAS_CONFLICT_STATE :: else -> skip fi;
  if :: res == 255 && rq_use_rev && rq_rev != act_rev -> res = CAS_CONFLICT_REV :: else -> skip fi;
  /* CheckTransitionAgainst */
  if :: res == 255 && !A_LEGAL(act_st, rq_new) -> res = CAS_PRECONDITION :: else -> skip fi;
  if :: res == 255 && rq_with_result && act_result -> res = CAS_PRECONDITION :: else -> skip fi;
  if :: res == 255 && rq_approval && rq_new_rev != act_rev + 1 -> res = CAS_PRECONDITION :: else -> skip fi;
  if :: res == 255 && rq_approval && rq_appr_hash != 1 -> res = CAS_PRECONDITION :: else -> skip fi;
  if :: res == 255 && rq_approval && act_dec[rq_actor] != 0 -> res = CAS_PRECONDITION :: else -> skip fi;
  if :: res == 255 && !rq_approval && rq_new_rev != act_rev -> res = CAS_PRECONDITION :: else -> skip fi;
  /* ApplyActionTransition */
  if
  :: res == 255 ->
     res = CAS_OK;
     act_st = rq_new;
     act_rev = rq_new_rev;
     if
     :: rq_approval -> act_dec[rq_actor] = rq_outcome; act_dec_hash[rq_actor] = rq_appr_hash
     :: else -> skip
     fi;
     if
     :: rq_with_result -> act_result = 1
     :: else -> skip
     fi
  :: else -> skip
  fi;
  cas_bad = 0
}

/* The requests ActionService builds (names as in the table). `h` is the plan hash the caller
 * holds (read from the record, so 1, unless the model says otherwise) and `rev` the revision
 * it read. */

/* DecisionTransition: one decision by human `who`, settling into `next`. */
inline rq_decide(p_h, p_rev, p_who, p_outcome, p_next) {
  rq_exp_mask = (1 << A_PENDING); rq_hash = p_h; rq_use_rev = 1; rq_rev = p_rev;
  rq_new = p_next; rq_new_rev = p_rev + 1; rq_approval = 1; rq_actor = p_who;
  rq_outcome = p_outcome; rq_appr_hash = p_h; rq_with_result = 0
}
/* MaterializeExpiry: compares the revision it read, so a decision committed since is a
 * conflict (re-read and retried), never a FailedPrecondition. */
inline rq_expire(p_h, p_rev) {
  rq_exp_mask = (1 << A_PLANNED) | (1 << A_PENDING) | (1 << A_APPROVED); rq_hash = p_h;
  rq_use_rev = 1; rq_rev = p_rev; rq_new = A_EXPIRED; rq_new_rev = p_rev; rq_approval = 0;
  rq_actor = 0; rq_outcome = 0; rq_appr_hash = 0; rq_with_result = 0
}
/* SameRevisionTransition(from -> to), with a result iff `result`: admission into executing,
 * PersistRefusal (-> failed), RecordResult (executing -> completed|failed), the reconciler. */
inline rq_same_rev(p_h, p_rev, p_from, p_to, p_result) {
  rq_exp_mask = (1 << p_from); rq_hash = p_h; rq_use_rev = 1; rq_rev = p_rev; rq_new = p_to;
  rq_new_rev = p_rev; rq_approval = 0; rq_actor = 0; rq_outcome = 0; rq_appr_hash = 0;
  rq_with_result = p_result
}

inline rq_clear() {
  rq_exp_mask = 0; rq_hash = 0; rq_use_rev = 0; rq_rev = 0; rq_new = 0; rq_new_rev = 0;
  rq_approval = 0; rq_actor = 0; rq_outcome = 0; rq_appr_hash = 0; rq_with_result = 0
}

/* ---- Recorded approval (issue 20 item 4): ActionService::Plan's initial state ----
 * DeriveApprovalRequirement, then record.state = requires_approval ? pending : planned.
 * ApprovalLevel numbered as the C++ enum. A capability with no floor stays approval-free for a
 * human requester, and for automation only when its automatic class is eligible; a session
 * posture that requires a human (ActionRequest::approval_posture) raises it to admin, so the
 * plan waits for a recorded approval. tables.pml prints it as `plan` rows. */
#define F_NONE 0
#define F_ADMIN 1
#define F_MFA 2
#define F_DRY_RUN_ONLY 3
inline plan_state(f, agent, eligible, posture, st) {
  if
  :: f == F_ADMIN || f == F_MFA -> st = A_PENDING
  :: f == F_NONE && ((agent && !eligible) || posture) -> st = A_PENDING
  :: !(f == F_ADMIN || f == F_MFA) && !(f == F_NONE && ((agent && !eligible) || posture)) ->
     st = A_PLANNED
  fi
}
