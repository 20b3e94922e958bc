/* The governed-action side of the safety kernel: ActionService's Decide, Execute and
 * MaterializeExpiry (src/actions/action_service.cc, action_execute.cc), the crash
 * reconciler (action_reconciler.cc) and the loop's resume (which executes the decided plan
 * with the suspended plan hash), all racing over one action record through the typed CAS of
 * actions.pml. Every caller reads the record in one step and commits in a later one, so
 * every interleaving of reads and CASes is explored.
 * Processes: two human deciders (each may present this plan's hash, none, or another plan's);
 * the resume executor (presents the suspended hash = this plan's); an API executor (any
 * hash); the clock (the TTL may pass at any moment); the fleet (the resource may drift at any
 * moment); a crash of the engine (stops every executor; the restarted engine reconciles, then
 * a client retries Execute); in the execute scenario, an operator withdrawing Patrol's
 * authority (issue 20 item 3: the API executor stands for Patrol and re-checks it at dispatch
 * time, gate 11b). Abstracted: ids, times, messages, audit; the operator lock and
 * the approval readiness refusals are nondeterministic; the CAS retry budget
 * (kMaxCasAttempts = 16) is MAXTRIES.
 * Verify: tests/model/verify.sh lifecycle_execute.pml | lifecycle_decide.pml. */
#include "actions.pml"

#if !defined(SCENARIO_EXECUTE) && !defined(SCENARIO_DECIDE)
#error "verify lifecycle_execute.pml or lifecycle_decide.pml (they choose the scenario)"
#endif

#ifndef MAXTRIES
#define MAXTRIES 2
#endif

#define EV_NONE       0
#define EV_DISPATCH   1  /* Fleet::Dispatch was called */
#define EV_REPLAY     2  /* Execute returned the stored terminal disposition */
#define EV_EXPIRED    3  /* a caller was refused because the plan expired */
#define EV_ADMIT_LOST 4  /* an admission CAS lost to a concurrent change */
#define EV_RECONCILED 5  /* the reconciler settled an interrupted execution */
#define EV_PERSISTED  6  /* a permanent pre-dispatch refusal was recorded as failed */
#define EV_EXPIRY_ERROR 7 /* MaterializeExpiry hit FailedPrecondition: an engine error */
#define EV_EXPIRY_LOST  8 /* MaterializeExpiry lost its CAS to a decision: re-read, retried */
/* ---- issue 20 item 3: the dispatch-time authority re-check (gate 11b) ---- */
#define EV_WITHDRAWN   20 /* gate 11b refused: the executor's authority was withdrawn */
/* ---- end issue 20 item 3 ---- */

byte ev = EV_NONE;
bit  act_req_appr = 0;  /* the plan requires approval (created pending_approval) */
byte act_quorum = 1;    /* distinct approving humans needed */
bit  ttl_passed = 0;    /* the clock passed expires_at */
byte live_hash = 1;     /* the plan rebuilt from the live fleet: 2 once the resource drifted */
bit  crashed = 0;       /* the engine died; the executors of that process are gone */
byte n_dispatch = 0;
bit  d_bound = 0;       /* the dispatch being reported is bound to plan 1 (see below) */
/* ---- issue 20 item 3: the dispatch-time authority re-check (gate 11b) ----
 * Patrol executes its own approval-free plan under an authority an operator can withdraw at
 * any moment (the autonomy level lowered, the Autopilot acknowledgement revoked, a remediation
 * lock or a maintenance window set): `auto_ok` is that authority. An executor that carries a
 * DispatchRecheck reads it after every other gate and immediately before admission into
 * executing; `d_authority` says the dispatch being reported was admitted by an authority still
 * in force at that check. */
bit  auto_ok = 1;
bit  d_authority = 0;
bit  d_rechecked = 0;  /* the dispatch being reported was made by a re-checking executor */
/* ---- end issue 20 item 3 ---- */

/* Recorded approval (issue 20 item 4): the requesting session's posture requires a human
 * (an Assistant session at controlled). Plan then makes the plan wait (plan_state), and the
 * resume executes only from an approval on record. */
bit  posture_human = 0;

#define APPROVALS_FOR_PLAN ((act_dec[0] == 1 && act_dec_hash[0] == 1) + \
                            (act_dec[1] == 1 && act_dec_hash[1] == 1))
#define NO_REJECTION (act_dec[0] != 2 && act_dec[1] != 2)

active proctype Clock() {
  if
  :: d_step { ttl_passed = 1; ev = EV_NONE }
  :: skip
  fi
}

/* The fleet may drift at any moment; or (issue 20 item 3, execute scenario) an operator
 * withdraws Patrol's authority at any moment (one process for both keeps the search small). */
active proctype Fleet() {
  if
  :: d_step { live_hash = 2; ev = EV_NONE }
#ifdef SCENARIO_EXECUTE
  :: d_step { auto_ok = 0; ev = EV_NONE }  /* issue 20 item 3 */
#endif
  :: skip
  fi
}

/* ActionService::Decide by human `h`: read the record, run the checks on that snapshot, commit
 * one CAS (a lost CAS re-reads, up to MAXTRIES times). */
proctype Human(byte h) {
  byte presented, s, r, mine, approvals, next, res, tries;
  bit approve;
again:
  skip;
  atomic {
    if
    :: tries == 0 ->
       /* the hash the decision presents (none is checked as this plan's), and the verdict */
       if :: presented = 1 :: presented = 2 fi;
       if :: approve = 1 :: approve = 0 fi
    :: else -> skip
    fi;
    d_step {
      s = act_st; r = act_rev; mine = act_dec[h]; res = 0; next = 0;
      approvals = (act_dec[0] == 1) + (act_dec[1] == 1)
    };
    if
    :: presented == 2 -> goto done                   /* action_plan_identity_mismatch */
    :: presented != 2 && mine != 0 -> goto done      /* replayed, or decision_conflict */
    :: presented != 2 && mine == 0 && ttl_passed && A_CAN_EXPIRE(s) -> goto expire
    :: presented != 2 && mine == 0 && !(ttl_passed && A_CAN_EXPIRE(s)) && s != A_PENDING ->
       goto done                                     /* action_not_pending */
    :: presented != 2 && mine == 0 && !(ttl_passed && A_CAN_EXPIRE(s)) && s == A_PENDING &&
       !approve -> next = A_REJECTED
    :: presented != 2 && mine == 0 && !(ttl_passed && A_CAN_EXPIRE(s)) && s == A_PENDING &&
       approve ->
       /* ApprovalReadiness reads the live fleet (drift) and the operator lock */
       if
       :: live_hash != 1 -> goto done                /* action_plan_drift */
       :: skip -> goto done                          /* lock, step-up or separation refusal */
       :: live_hash == 1 -> next = (approvals + 1 >= act_quorum -> A_APPROVED : A_PENDING)
       fi
    fi
  };
  atomic {
    d_step { rq_decide(1, r, h, (approve -> 1 : 2), next); act_cas(res); ev = EV_NONE };
    if
    :: res == CAS_OK -> goto done
    :: res != CAS_OK -> goto retry                   /* a concurrent decision or expiry */
    fi
  };
expire:
  skip;
  /* MaterializeExpiry from the snapshot */
  atomic {
    d_step {
      rq_expire(1, r); act_cas(res);
      ev = (res == CAS_OK -> EV_EXPIRED : (res == CAS_PRECONDITION -> EV_EXPIRY_ERROR :
            (res == CAS_CONFLICT_REV -> EV_EXPIRY_LOST : EV_NONE)))
    };
    if
    :: res == CAS_OK -> goto done                    /* action_plan_expired */
    :: res == CAS_CONFLICT_HASH || res == CAS_CONFLICT_STATE || res == CAS_CONFLICT_REV ->
       goto retry
    :: else -> goto done                             /* engine error: no_expiry_engine_error */
    fi
  };
retry:
  if
  :: tries < MAXTRIES -> tries++; goto again
  :: else -> goto done                               /* Aborted: the action kept changing */
  fi;
done:
  skip;
  d_step { presented = 0; s = 0; r = 0; mine = 0; approvals = 0; next = 0; res = 0; tries = 0;
           approve = 0 }
}

/* ActionService::Execute. e = 0: the loop's resume (plan hash of the suspended call);
 * e = 1: an API client (any hash); e = 2: a client retrying after the engine restarted. */
/* Recorded approval (item 4): LoopRun::ApplyDecision executes only with an approval of this
 * plan on record (resuming is not one). */
#define RESUME_WITHOUT_RECORD(e, s) ((e) == 0 && APPROVALS_FOR_PLAN == 0)

proctype Executor(byte e) {
  byte presented, s, r, res, tries, chk;
  bit rechk, seen_ok;  /* issue 20 item 3: carries a DispatchRecheck; what it last read */
  {
  /* issue 20 item 3: the API executor stands for Patrol (automation with a re-check); the
   * resume and the client retrying after a crash carry none */
  rechk = (e == 1);
  skip;
again:
  skip;
  atomic {
    if
    :: tries == 0 && e == 0 -> presented = 1         /* resume: the suspended plan hash */
    :: tries == 0 && e != 0 -> if :: presented = 1 :: presented = 2 fi
    :: tries != 0 -> skip
    fi;
    d_step { s = act_st; r = act_rev; res = 0; chk = 0 };
    if
    :: presented == 2 -> goto done                   /* gate 2: plan_identity_mismatch */
    :: presented != 2 && A_HAS_RESULT(s) -> ev = EV_REPLAY; goto done  /* gate 3: replay */
    :: presented != 2 && s == A_EXECUTING -> goto done  /* gate 4: already_executing */
    :: presented != 2 && (s == A_REJECTED || s == A_EXPIRED) -> goto done  /* gate 5: final */
    :: presented != 2 && A_CAN_EXPIRE(s) && ttl_passed -> goto expire      /* gate 6 */
    :: presented != 2 && A_CAN_EXPIRE(s) && !ttl_passed &&
       (s == A_PENDING || (s == A_PLANNED && act_req_appr)) -> goto done  /* gate 8 */
    :: presented != 2 && A_CAN_EXPIRE(s) && !ttl_passed &&
       !(s == A_PENDING || (s == A_PLANNED && act_req_appr)) && !RESUME_WITHOUT_RECORD(e, s) ->
       skip
    /* recorded approval (item 4): the resume refuses a plan with no approval on record */
    :: presented != 2 && A_CAN_EXPIRE(s) && !ttl_passed &&
       !(s == A_PENDING || (s == A_PLANNED && act_req_appr)) && RESUME_WITHOUT_RECORD(e, s) ->
       goto done
    fi
  };
  /* gate 10 (drift: the plan rebuilt from the live fleet) and gate 11 (remediation lock):
   * permanent refusals, persisted as failed */
  atomic {
    d_step { chk = live_hash };
    if
    :: chk != 1 -> goto persist
    :: chk == 1 -> goto persist                      /* the operator lock is set */
    :: chk == 1 -> skip
    fi;
    /* ---- issue 20 item 3: gate 11b, the executor's authority read again now, in the same
     * step as the other gates' reads (a refusal persists nothing) ---- */
    seen_ok = auto_ok;
    if
    :: rechk && !seen_ok -> ev = EV_WITHDRAWN; goto done
    :: else -> skip
    fi
    /* ---- end issue 20 item 3 ---- */
  };
  /* gate 12: admission into executing, committed before anything is dispatched */
  atomic {
    d_step {
      rq_same_rev(1, r, s, A_EXECUTING, 0); act_cas(res);
      ev = (res == CAS_OK -> EV_NONE : EV_ADMIT_LOST)
    };
    if
    :: res == CAS_OK -> res = 0
    :: res == CAS_CONFLICT_HASH -> goto done
    :: res != CAS_OK && res != CAS_CONFLICT_HASH && act_st == A_EXECUTING -> goto done
    :: res != CAS_OK && res != CAS_CONFLICT_HASH && act_st != A_EXECUTING -> goto retry
    fi
  };
  /* gate 13: dispatch once (the result is bound to the plan as checked above) ... */
  d_step {
    n_dispatch++;
    d_bound = (presented != 2) && chk == 1 &&
              (!act_req_appr || (APPROVALS_FOR_PLAN >= act_quorum && NO_REJECTION));
    d_authority = !rechk || seen_ok;  /* issue 20 item 3 */
    d_rechecked = rechk;
    ev = EV_DISPATCH
  };
  /* ... then record the terminal result (a lost CAS: action_not_executing) */
  if
  :: d_step { rq_same_rev(1, r, A_EXECUTING, A_COMPLETED, 1); act_cas(res); ev = EV_NONE;
              res = 0 }
  :: d_step { rq_same_rev(1, r, A_EXECUTING, A_FAILED, 1); act_cas(res); ev = EV_NONE;
              res = 0 }
  fi;
  goto done;
expire:
  skip;
  /* MaterializeExpiry from the snapshot */
  atomic {
    d_step {
      rq_expire(1, r); act_cas(res);
      ev = (res == CAS_OK -> EV_EXPIRED : (res == CAS_PRECONDITION -> EV_EXPIRY_ERROR :
            (res == CAS_CONFLICT_REV -> EV_EXPIRY_LOST : EV_NONE)))
    };
    if
    :: res == CAS_OK -> goto done                    /* action_plan_expired */
    :: res == CAS_CONFLICT_HASH || res == CAS_CONFLICT_STATE || res == CAS_CONFLICT_REV ->
       goto retry
    :: else -> goto done                             /* engine error: no_expiry_engine_error */
    fi
  };
persist:
  skip;
  /* PersistRefusal: failed, not run */
  atomic {
    d_step {
      rq_same_rev(1, r, s, A_FAILED, 1); act_cas(res);
      ev = (res == CAS_OK -> EV_PERSISTED : EV_NONE)
    };
    if
    :: res == CAS_OK -> goto done
    :: res == CAS_CONFLICT_HASH || res == CAS_CONFLICT_STATE || res == CAS_CONFLICT_REV ->
       goto retry
    :: else -> goto done
    fi
  };
retry:
  if
  :: tries < MAXTRIES -> tries++; goto again
  :: else -> goto done                               /* Aborted: the action kept changing */
  fi;
done:
  skip
  } unless { crashed && e != 2 };
  d_step { presented = 0; s = 0; r = 0; res = 0; tries = 0; chk = 0; rechk = 0; seen_ok = 0 }
}

/* The engine may die at any moment; on restart ReconcileInterruptedExecutions settles an
 * executing action as failed (inconclusive), and a client retries Execute. */
proctype Crash() {
  byte s, r, res;
  if
  :: d_step { crashed = 1; ev = EV_NONE };
     d_step { s = act_st; r = act_rev };
     if
     :: s == A_EXECUTING ->
        d_step {
          rq_same_rev(1, r, A_EXECUTING, A_FAILED, 1); act_cas(res);
          ev = (res == CAS_OK -> EV_RECONCILED : EV_NONE)
        }
     :: else -> skip
     fi;
     run Executor(2)
  :: skip
  fi
}

/* Two scenarios keep the exhaustive search small (lifecycle_execute.pml,
 * lifecycle_decide.pml define one each): executing a decided plan under races, TTL, drift and
 * crashes; and deciding a pending plan, with the resume executing whatever was decided. */
init {
  atomic {
#ifdef SCENARIO_EXECUTE
    /* ActionService::Plan made it planned (approval-free), or humans approved it (quorum 1
     * or 2) before these callers run */
    if
    :: act_req_appr = 0; act_quorum = 1; act_st = A_PLANNED
    /* recorded approval (item 4): an approval-free capability requested by the Assistant,
     * planned under either session posture (plan_state) */
    :: if :: posture_human = 0 :: posture_human = 1 fi;
       plan_state(F_NONE, 1, 1, posture_human, act_st);
       act_req_appr = (act_st == A_PENDING); act_quorum = 1
    :: act_req_appr = 1; act_quorum = 1; act_st = A_APPROVED; act_rev = 1;
       act_dec[0] = 1; act_dec_hash[0] = 1
    :: act_req_appr = 1; act_quorum = 2; act_st = A_APPROVED; act_rev = 2;
       act_dec[0] = 1; act_dec_hash[0] = 1; act_dec[1] = 1; act_dec_hash[1] = 1
    fi;
    run Executor(0);
    run Executor(1);
    run Crash()
#else
    /* ActionService::Plan made it pending_approval (quorum 1 or 2) */
    act_req_appr = 1; act_st = A_PENDING;
    if
    :: act_quorum = 1
    :: act_quorum = 2
    fi;
    /* recorded approval (item 4): pending by the capability's floor or by the posture */
    if :: posture_human = 0 :: posture_human = 1 fi;
    run Human(0);
    run Human(1);
    run Executor(0)
#endif
  }
}

/* ---- The action lifecycle invariants ---- */
/* Nothing is dispatched twice, whatever races, crashes and retries happen. */
ltl dispatch_at_most_once { [] (n_dispatch <= 1) }
/* A terminal action never dispatches (again). */
ltl terminal_never_dispatches { [] (A_TERMINAL(act_st) -> [] (ev != EV_DISPATCH)) }
/* Nothing ever leaves a terminal state. */
ltl terminal_is_absorbing { [] ((act_st == A_REJECTED -> [] (act_st == A_REJECTED)) &&
                                (act_st == A_EXPIRED -> [] (act_st == A_EXPIRED)) &&
                                (act_st == A_COMPLETED -> [] (act_st == A_COMPLETED)) &&
                                (act_st == A_FAILED -> [] (act_st == A_FAILED))) }
/* Dispatch happens only after admission into executing was committed. */
ltl dispatch_only_when_executing { [] (ev == EV_DISPATCH -> act_st == A_EXECUTING) }
/* An approval binds one plan hash: a dispatch presents no other plan's hash, passed the drift
 * check against the plan, and (when approval is required) a quorum of approvals bound to this
 * plan's hash, none rejecting, authorizes it. */
ltl approval_binds_plan { [] (ev == EV_DISPATCH -> d_bound) }
/* Every recorded decision binds this plan's hash. */
ltl decisions_bind_plan { [] ((act_dec[0] != 0 -> act_dec_hash[0] == 1) &&
                              (act_dec[1] != 0 -> act_dec_hash[1] == 1)) }
/* approved only with a quorum of approvals and no rejection. */
ltl approved_needs_quorum { [] (act_st == A_APPROVED -> (APPROVALS_FOR_PLAN >= act_quorum &&
                                                          NO_REJECTION)) }
/* An expiry racing a decision is a CAS conflict that re-reads, never an engine error
 * (MaterializeExpiry compares the revision it read). */
ltl no_expiry_engine_error { [] (ev != EV_EXPIRY_ERROR) }

/* Recorded approval (item 4): an action a session posture requires a human for never reaches
 * executing (nor dispatches) without a quorum of approvals of this plan on record. */
ltl posture_needs_recorded_approval {
  [] ((posture_human && (act_st == A_EXECUTING || ev == EV_DISPATCH)) ->
      APPROVALS_FOR_PLAN >= act_quorum) }

/* ---- issue 20 item 3: the dispatch-time authority re-check ---- */
/* No dispatch by an executor whose authority (Patrol's autonomy level, the Autopilot
 * acknowledgement, the lock, the window) was withdrawn before its dispatch-time check: the
 * authority that admitted a fix is the one in force when it is dispatched. */
ltl dispatch_authority_in_force { [] (ev == EV_DISPATCH -> d_authority) }
#ifdef SCENARIO_EXECUTE
/* ... and the re-check does refuse (the model is not vacuous). */
ltl reach_authority_withdrawn { [] (ev != EV_WITHDRAWN) }
/* A re-checking executor whose authority held at the check still dispatches. */
ltl reach_rechecked_dispatch { [] !(ev == EV_DISPATCH && d_rechecked) }
/* The property is about withdrawal BEFORE the check: withdrawn between the check and the
 * dispatch (the CAS into executing is all that lies between), the dispatch still happens. */
ltl reach_withdrawn_after_check { [] !(ev == EV_DISPATCH && d_rechecked && !auto_ok) }
#endif
/* ---- end issue 20 item 3 ---- */

/* ---- Reachability: each must be VIOLATED (the model is not vacuous) ---- */
ltl reach_dispatch { [] (ev != EV_DISPATCH) }
ltl reach_quorum_dispatch { [] !(ev == EV_DISPATCH && act_quorum == 2) }
#ifdef SCENARIO_EXECUTE
ltl reach_reconciled { [] (ev != EV_RECONCILED) }
ltl reach_replay_after_crash { [] !(ev == EV_REPLAY && crashed) }
#endif
ltl reach_admission_lost { [] (ev != EV_ADMIT_LOST) }
ltl reach_expired_refusal { [] (ev != EV_EXPIRED) }
ltl reach_persisted_refusal { [] (ev != EV_PERSISTED) }
#ifdef SCENARIO_DECIDE
/* Recorded approval (item 4): a posture plan does run once humans approved it. */
ltl reach_posture_dispatch { [] !(ev == EV_DISPATCH && posture_human) }
/* An expiry loses its CAS to a decision (below quorum, or the approving one) and re-reads. */
ltl reach_expiry_conflict { [] (ev != EV_EXPIRY_LOST) }
#endif
