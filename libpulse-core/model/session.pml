/* The session side of the safety kernel: the agentic loop's turns (src/loop/loop_turn.cc,
 * loop_tools.cc) through the batch-aware FSM gate, the approval suspend/resume path
 * (agentic_loop.cc Resume, loop_resume.cc ApplyDecision) and the session clears, checked
 * against an independent specification of seed 000's invariants (the g_* ghost variables,
 * which never read the FSM).
 * Abstracted: a provider turn is any batch of 1..BG_MAX calls, each a read (resolve/read), an
 * infrastructure write (pulse_control) or a call with no FSM effect (finding lifecycle,
 * question); every call may fail; a write's handler may refuse, plan only, plan and await a
 * decision (the run suspends), or dispatch (with or without verification in its own result,
 * or failing after the dispatch because its outcome could not be recorded).
 * Bounds: NRUNS user messages, NTURNS provider turns per run (the last offers no tools).
 * Verify: tests/model/verify.sh (spin -a; cc; ./pan -a -N <property>). */
#include "fsm.pml"

#ifndef NRUNS
#define NRUNS 2
#endif
#ifndef NTURNS
#define NTURNS 3
#endif

/* The last observable event; set in the same d_step as everything it reports. */
#define EV_NONE           0
#define EV_LOOP_DISPATCH  1  /* this session dispatched an infrastructure mutation */
#define EV_ADOPT          2  /* a resumed call reports a mutation dispatched elsewhere */
#define EV_ANSWER         3  /* a run ended with a final answer (the model's or a summary) */
#define EV_ANSWER_REFUSED 4  /* a final answer was refused; the run goes on */
#define EV_NOT_RUN        5  /* a decided plan that did not run was applied to the call */
#define EV_SUSPEND        6  /* the run suspended on an action decision */
#define EV_UNVERIFIED_END 7  /* the budget ran out while a change was unverified */
#define EV_CLEAR          8  /* Reset or ResetKeepProgress */

byte ev = EV_NONE;

/* ---- The specification (ghost state; never reads fsm_*) ---- */
bit  g_target = 0;      /* a target was established (read, resolve, prefetch) since Reset */
byte g_pending = 0;     /* an unverified dispatched mutation: 2 this turn, 1 an earlier one */
bit  g_turn_target = 0; /* g_target when this turn's calls were admitted */
bit  g_adm_target = 0;  /* ... for the dispatch being reported */
byte g_pre_pending = 0; /* g_pending just before the dispatch being reported */
bit  g_via_resume = 0;  /* the dispatch being reported came through Resume */
byte g_writes = 0;      /* dispatches by this session, saturating at 2 (reachability only) */
byte g_st_before = 0;   /* fsm_st before a not-run decision was applied */

bit suspended = 0;      /* the session awaits a decision on one pulse_control call */

/* A successful read of this session: evidence for a mutation dispatched in an earlier turn. */
inline spec_read() {
  g_target = 1;
  if
  :: g_pending == 1 -> g_pending = 0
  :: else -> skip
  fi
}

/* This session dispatched a mutation admitted with target knowledge `adm`. */
inline spec_dispatch(adm, resumed) {
  g_pre_pending = g_pending;
  g_adm_target = adm;
  g_via_resume = resumed;
  g_pending = 2;
  if
  :: g_writes < 2 -> g_writes++
  :: else -> skip
  fi;
  ev = EV_LOOP_DISPATCH
}

/* The admitted calls of one turn, executed and post-processed in provider order. */
inline run_calls() {
  i = 0;
  do
  :: i < bg_n ->
     if
     :: bg_verdict[i] != V_ALLOW -> skip
     :: bg_verdict[i] == V_ALLOW && bg_eff[i] == E_READ ->
        if
        :: d_step { ev = EV_NONE }                                             /* failed */
        :: d_step { ev = EV_NONE; bg_on_succeeded(i, 0); spec_read() }
        fi
     :: bg_verdict[i] == V_ALLOW && bg_eff[i] == E_NONE ->
        if
        :: d_step { ev = EV_NONE }
        :: d_step { ev = EV_NONE; bg_on_succeeded(i, 0) }
        :: d_step { ev = EV_NONE; bg_on_succeeded(i, 0); question = 1 }  /* pulse_question */
        fi
     :: bg_verdict[i] == V_ALLOW && bg_eff[i] == E_WRITE ->
        if
        :: d_step { ev = EV_NONE }                             /* refused: nothing dispatched */
        :: d_step { ev = EV_NONE; bg_on_succeeded(i, 0) }      /* planned, not executable now */
        :: d_step { ev = EV_NONE; bg_on_succeeded(i, 0); approval = 1 }  /* awaits a decision */
        :: d_step { spec_dispatch(g_turn_target, 0); bg_on_succeeded(i, 1) }  /* autonomous */
        :: d_step { spec_dispatch(g_turn_target, 0); bg_on_succeeded(i, 1);
                    bg_on_self_verified(i); g_pending = 0 }   /* result carried verification.ok */
        /* Execute dispatched, then its result could not be stored (result_unrecorded) or the
         * finishing CAS was lost (action_not_executing): the handler's failure is marked
         * ToolResult::dispatched = true, and the loop reports it as a dispatched write (never
         * self-verified). */
        :: d_step { spec_dispatch(g_turn_target, 0); bg_on_succeeded(i, 1) }
        fi
     fi;
     i++
  :: else -> break
  od;
  i = 0
}

active proctype Session() {
  byte runs = 0;
  byte turn = 0;
  byte i = 0;
  byte v = 0;
  bit approval = 0;
  bit question = 0;
  byte n = 0, e0 = 0, e1 = 0, e2 = 0;

idle:
  skip;
  do
  :: runs < NRUNS ->
     /* a user message starts a run; a suspension it finds is superseded (nothing runs) */
     d_step { runs++; turn = 0; suspended = 0; ev = EV_NONE };
     if
     :: d_step { fsm_target_established(); g_target = 1 }   /* prefetched @mention */
     :: skip
     fi;
     goto turns
  :: suspended -> goto resume
  /* Session clears (an embedder's API; the seed lets them drop pending verification). A clear
   * drops the context and with it any suspended call, so none happens while one is pending;
   * see GAP_CLEAR_WHILE_SUSPENDED for what follows otherwise. */
#ifdef GAP_CLEAR_WHILE_SUSPENDED
  :: d_step { fsm_reset(); g_target = 0; g_pending = 0; ev = EV_CLEAR }
  :: d_step { fsm_reset_keep_progress(); g_pending = 0; ev = EV_CLEAR }
#else
  :: !suspended -> d_step { fsm_reset(); g_target = 0; g_pending = 0; ev = EV_CLEAR }
  :: !suspended -> d_step { fsm_reset_keep_progress(); g_pending = 0; ev = EV_CLEAR }
#endif
  :: runs == NRUNS -> break
  od;
  goto finished;

turns:
  skip;
  do
  :: turn < NTURNS ->
     d_step {
       turn++;
       if
       :: g_pending == 2 -> g_pending = 1
       :: else -> skip
       fi;
       ev = EV_NONE
     };
     if
     :: turn == NTURNS -> goto answer                 /* the last turn offers no tools */
     :: turn < NTURNS -> goto answer                  /* the model answers */
     :: turn < NTURNS ->                              /* the model calls 1..BG_MAX tools */
        /* the calls are chosen in locals and admitted in one step, so no state shows a batch
         * without its verdicts */
        if :: n = 1 :: n = 2 :: n = 3 fi;
        if :: e0 = E_READ :: e0 = E_WRITE :: e0 = E_NONE fi;
        if :: n >= 2 -> if :: e1 = E_READ :: e1 = E_WRITE :: e1 = E_NONE fi :: else -> skip fi;
        if :: n >= 3 -> if :: e2 = E_READ :: e2 = E_WRITE :: e2 = E_NONE fi :: else -> skip fi;
        d_step {
          bg_n = n; bg_eff[0] = e0; bg_eff[1] = e1; bg_eff[2] = e2;
          n = 0; e0 = 0; e1 = 0; e2 = 0;
          bg_admit(); g_turn_target = g_target
        };
        run_calls();
        d_step { bg_clear(); g_turn_target = 0 };
        if
        :: approval -> d_step { approval = 0; question = 0; suspended = 1; ev = EV_SUSPEND };
                       goto idle
        :: !approval && question -> d_step { question = 0 }; goto idle   /* awaiting input */
        :: else -> skip
        fi
     fi
  :: else -> goto idle
  od;

answer:
  skip;
  d_step {
    fsm_can_final_answer(v);
    if
    :: v == V_ALLOW -> ev = EV_ANSWER
    :: else -> ev = EV_ANSWER_REFUSED
    fi;
    v = 0
  };
  if
  :: ev == EV_ANSWER -> goto idle
  :: ev == EV_ANSWER_REFUSED && turn < NTURNS -> goto turns   /* evidence is asked for */
  :: ev == EV_ANSWER_REFUSED && turn == NTURNS -> d_step { ev = EV_UNVERIFIED_END }; goto idle
  fi;

resume:
  skip;
  /* The decision was read back from the lifecycle (pending_approval keeps the suspension and
   * changes nothing, so it is not modelled). */
  if
  :: d_step { g_st_before = fsm_st; suspended = 0; ev = EV_NOT_RUN }
       /* rejected, expired, the action is unknown, or it ended before dispatch */
  :: d_step { suspended = 0; fsm_on_succeeded(E_WRITE, 1); g_pending = 2; ev = EV_ADOPT }
       /* completed/failed after a dispatch elsewhere, or executing elsewhere */
  :: d_step { suspended = 0; ev = EV_NONE; fsm_can_execute(E_WRITE, v) };
     /* approved or planned: the policy and the FSM gate are checked again */
     if
     :: v != V_ALLOW -> d_step { g_st_before = fsm_st; v = 0; ev = EV_NOT_RUN }
     :: v == V_ALLOW ->
        if
        :: d_step { g_st_before = fsm_st; v = 0; ev = EV_NOT_RUN }
             /* policy denies, planned without a human, Execute refuses before dispatch or
              * replays not-run */
        :: d_step { v = 0; suspended = 1; ev = EV_NONE }
             /* the lifecycle is unreachable before any dispatch: the call stays suspended */
        :: d_step { v = 0; spec_dispatch(g_target, 1); fsm_on_succeeded(E_WRITE, 1) }
             /* Execute dispatched: completed or failed, or its outcome could not be recorded
              * (ExecuteDispatchedUnrecorded: an error result, still a dispatched write) */
        fi
     fi
  fi;
  if
  :: suspended -> goto idle
  :: else -> goto turns
  fi;

finished:
  skip
}

/* ---- Seed 000 and ARCHITECTURE §4.2, as LTL over the specification ---- */
/* No writing without a validated target. */
ltl no_write_without_target { [] (ev == EV_LOOP_DISPATCH -> g_adm_target) }
/* No writing again until the last write is verified (batch-aware: also within one turn). */
ltl no_second_write_unverified { [] (ev == EV_LOOP_DISPATCH -> g_pre_pending == 0) }
/* No final answer about an unverified change. */
ltl no_answer_unverified { [] (ev == EV_ANSWER -> g_pending == 0) }
/* The FSM refines the specification: an unverified change is always VERIFYING without
 * evidence, so every gate above sees it. */
ltl fsm_tracks_unverified { [] (g_pending != 0 -> (fsm_st == S_VERIFYING && !fsm_raw)) }
/* Reads are never blocked. */
ltl reads_never_blocked { [] ((bg_eff[0] != E_WRITE -> bg_verdict[0] == V_ALLOW) &&
                              (bg_eff[1] != E_WRITE -> bg_verdict[1] == V_ALLOW) &&
                              (bg_eff[2] != E_WRITE -> bg_verdict[2] == V_ALLOW)) }
/* Batch-aware gating: one turn never admits two infrastructure writes. */
ltl one_write_per_turn { [] !((bg_eff[0] == E_WRITE && bg_verdict[0] == V_ALLOW &&
                               bg_eff[1] == E_WRITE && bg_verdict[1] == V_ALLOW) ||
                              (bg_eff[0] == E_WRITE && bg_verdict[0] == V_ALLOW &&
                               bg_eff[2] == E_WRITE && bg_verdict[2] == V_ALLOW) ||
                              (bg_eff[1] == E_WRITE && bg_verdict[1] == V_ALLOW &&
                               bg_eff[2] == E_WRITE && bg_verdict[2] == V_ALLOW)) }
/* Only a dispatched mutation is a write transition: a decided plan that did not run changes
 * no FSM state. */
ltl not_run_changes_nothing { [] (ev == EV_NOT_RUN -> fsm_st == g_st_before) }

/* ---- Reachability: each must be VIOLATED (the model is not vacuous) ---- */
ltl reach_dispatch { [] (ev != EV_LOOP_DISPATCH) }
ltl reach_resume_dispatch { [] !(ev == EV_LOOP_DISPATCH && g_via_resume) }
ltl reach_second_write { [] !(ev == EV_LOOP_DISPATCH && g_writes == 2) }
ltl reach_answer_after_write { [] !(ev == EV_ANSWER && fsm_wrote) }
ltl reach_answer_refused { [] (ev != EV_ANSWER_REFUSED) }
ltl reach_batch_r2 { [] (bg_verdict[1] != V_R2 && bg_verdict[2] != V_R2) }
ltl reach_unverified_end { [] (ev != EV_UNVERIFIED_END) }

/* ---- Known gaps (docs/model.md): with each modelled, the named property fails ----
 * @gap GAP_CLEAR_WHILE_SUSPENDED no_write_without_target */
