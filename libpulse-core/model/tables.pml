/* Prints, for every input, what the model's inlines compute: the tables tests/model compares
 * row for row with the same enumeration over the real C++ (tests/model/model_table_dump.cc).
 * Run: spin -n1 -T tables.pml | grep -E '^(effect|fsm|batch|edge|astate|cas|plan) '
 * Enumeration order and row format are fixed; see docs/model.md. */
#include "fsm.pml"
#include "actions.pml"

inline p_state(s) {
  if
  :: s == S_RESOLVING -> printf("RESOLVING")
  :: s == S_READING -> printf("READING")
  :: s == S_VERIFYING -> printf("VERIFYING")
  :: else -> printf("WRITING")
  fi
}
inline p_session() { p_state(fsm_st); printf(" raw=%d wrote=%d", fsm_raw, fsm_wrote) }
inline p_verdict(v) {
  if
  :: v == V_ALLOW -> printf("ALLOW")
  :: v == V_R1 -> printf("R1")
  :: v == V_R2 -> printf("R2")
  :: v == V_R3 -> printf("R3")
  fi
}
inline p_effect(e) {
  if
  :: e == E_READ -> printf("read")
  :: e == E_WRITE -> printf("write")
  :: e == E_NONE -> printf("none")
  fi
}
inline p_astate(s) {
  if
  :: s == A_PLANNED -> printf("planned")
  :: s == A_PENDING -> printf("pending_approval")
  :: s == A_APPROVED -> printf("approved")
  :: s == A_REJECTED -> printf("rejected")
  :: s == A_EXPIRED -> printf("expired")
  :: s == A_EXECUTING -> printf("executing")
  :: s == A_COMPLETED -> printf("completed")
  :: s == A_FAILED -> printf("failed")
  fi
}

byte t_st, t_raw, t_wrote, t_ev, t_v, t_k, t_m, t_e, t_n, t_i, t_d, t_r, t_q, t_h, t_x;
int t_code, t_ecode, t_ocode, t_emax, t_omax, t_tmp;

/* Recorded approval (issue 20 item 4): the `plan` rows' inputs and output. */
byte t_pf, t_pa, t_pe, t_pp, t_ps;
inline p_floor(f) {
  if
  :: f == F_NONE -> printf("none")
  :: f == F_ADMIN -> printf("admin")
  :: f == F_MFA -> printf("mfa")
  :: f == F_DRY_RUN_ONLY -> printf("dry_run_only")
  fi
}

/* Restore a session snapshot (valid ones only, as SessionFsm::Restore accepts). */
inline set_session() { fsm_st = t_st; fsm_raw = t_raw; fsm_wrote = t_wrote }
#define VALID_SESSION (!(t_raw && t_st != S_VERIFYING) && !(t_st == S_VERIFYING && !t_wrote))

init {
  /* ---- EffectOf over every (kind, mutation) ---- */
  for (t_k : 0 .. 3) {
    for (t_m : 0 .. 2) {
      effect_of(t_k, t_m, t_e);
      printf("effect kind=%d mutation=%d -> ", t_k, t_m); p_effect(t_e); printf("\n")
    }
  }
  /* ---- SessionFsm: every valid snapshot x every event ---- */
  for (t_st : 0 .. 3) {
    for (t_raw : 0 .. 1) {
      for (t_wrote : 0 .. 1) {
        if
        :: t_st != 2 && VALID_SESSION ->
           for (t_ev : 0 .. 12) {
             set_session();
             t_v = V_ALLOW;
             printf("fsm "); p_session(); printf(" ");
             if
             :: t_ev == 0 -> printf("can_execute(read)"); fsm_can_execute(E_READ, t_v)
             :: t_ev == 1 -> printf("can_execute(write)"); fsm_can_execute(E_WRITE, t_v)
             :: t_ev == 2 -> printf("can_execute(none)"); fsm_can_execute(E_NONE, t_v)
             :: t_ev == 3 -> printf("succeeded(read)"); fsm_on_succeeded(E_READ, 0)
             :: t_ev == 4 -> printf("succeeded(write,dispatched)"); fsm_on_succeeded(E_WRITE, 1)
             :: t_ev == 5 -> printf("succeeded(write,not_dispatched)"); fsm_on_succeeded(E_WRITE, 0)
             :: t_ev == 6 -> printf("succeeded(none)"); fsm_on_succeeded(E_NONE, 0)
             :: t_ev == 7 -> printf("self_verified"); fsm_self_verified()
             :: t_ev == 8 -> printf("final_answer"); fsm_can_final_answer(t_v)
             :: t_ev == 9 -> printf("complete_verification"); fsm_complete_verification()
             :: t_ev == 10 -> printf("reset"); fsm_reset()
             :: t_ev == 11 -> printf("reset_keep_progress"); fsm_reset_keep_progress()
             :: t_ev == 12 -> printf("target_established"); fsm_target_established()
             fi;
             printf(" -> "); p_verdict(t_v); printf(" "); p_session(); printf("\n")
           }
        :: else -> skip
        fi
      }
    }
  }
  /* ---- BatchGate: every valid snapshot x every batch of 1..3 effects x every outcome of the
   * admitted calls (read/none: fail|ok; write: fail|ok|dispatched|verified), post-processed in
   * provider order ---- */
  for (t_st : 0 .. 3) {
    for (t_raw : 0 .. 1) {
      for (t_wrote : 0 .. 1) {
        if
        :: t_st != 2 && VALID_SESSION ->
           for (t_n : 1 .. BG_MAX) {
             t_emax = 1; t_i = 0;
             do :: t_i < t_n -> t_emax = t_emax * 3; t_i++ :: else -> break od;
             t_omax = 1; t_i = 0;
             do :: t_i < t_n -> t_omax = t_omax * 4; t_i++ :: else -> break od;
             for (t_ecode : 0 .. t_emax - 1) {
               for (t_ocode : 0 .. t_omax - 1) {
                 /* decode the effects, admit, and check the outcome digits are possible */
                 set_session();
                 bg_n = t_n; t_tmp = t_ecode; t_i = 0;
                 do :: t_i < t_n -> bg_eff[t_i] = t_tmp % 3; t_tmp = t_tmp / 3; t_i++
                    :: else -> break od;
                 bg_admit();
                 t_x = 1; t_tmp = t_ocode; t_i = 0;
                 do
                 :: t_i < t_n ->
                    t_d = t_tmp % 4; t_tmp = t_tmp / 4;
                    if
                    :: bg_verdict[t_i] != V_ALLOW && t_d != 0 -> t_x = 0
                    :: bg_verdict[t_i] == V_ALLOW && bg_eff[t_i] != E_WRITE && t_d > 1 -> t_x = 0
                    :: else -> skip
                    fi;
                    t_i++
                 :: else -> break
                 od;
                 if
                 :: t_x ->
                    printf("batch "); p_session(); printf(" [");
                    t_i = 0;
                    do :: t_i < t_n -> if :: t_i > 0 -> printf(",") :: else -> skip fi;
                                       p_effect(bg_eff[t_i]); t_i++
                       :: else -> break od;
                    printf("] -> [");
                    t_i = 0;
                    do :: t_i < t_n -> if :: t_i > 0 -> printf(",") :: else -> skip fi;
                                       p_verdict(bg_verdict[t_i]); t_i++
                       :: else -> break od;
                    printf("] [");
                    t_tmp = t_ocode; t_i = 0;
                    do
                    :: t_i < t_n ->
                       t_d = t_tmp % 4; t_tmp = t_tmp / 4;
                       if :: t_i > 0 -> printf(",") :: else -> skip fi;
                       if
                       :: bg_verdict[t_i] != V_ALLOW -> printf("-")
                       :: bg_verdict[t_i] == V_ALLOW && t_d == 0 -> printf("fail")
                       :: t_d == 1 -> printf("ok")
                       :: t_d == 2 -> printf("dispatched")
                       :: t_d == 3 -> printf("verified")
                       fi;
                       if
                       :: t_d >= 1 -> bg_on_succeeded(t_i, t_d >= 2)
                       :: else -> skip
                       fi;
                       if
                       :: t_d == 3 -> bg_on_self_verified(t_i)
                       :: else -> skip
                       fi;
                       t_i++
                    :: else -> break
                    od;
                    printf("] -> "); p_session(); printf("\n")
                 :: else -> skip
                 fi;
                 bg_clear()
               }
             }
           }
        :: else -> skip
        fi
      }
    }
  }
  /* ---- Action lifecycle: the graph, terminal and expirable states ---- */
  for (t_st : 0 .. 7) {
    printf("astate "); p_astate(t_st);
    printf(" terminal=%d can_expire=%d\n", A_TERMINAL(t_st), A_CAN_EXPIRE(t_st));
    for (t_e : 0 .. 7) {
      if
      :: A_LEGAL(t_st, t_e) -> printf("edge "); p_astate(t_st); printf(" -> "); p_astate(t_e); printf("\n")
      :: else -> skip
      fi
    }
  }
  /* ---- The CAS over every stored record (state x revision 0|1, revision 1 = H0 approved)
   * x every request ActionService builds x the caller's plan hash (match|other) x the
   * revision it read (current|moved) ---- */
  for (t_st : 0 .. 7) {
    for (t_r : 0 .. 1) {
      for (t_q : 0 .. 12) {
        for (t_h : 0 .. 1) {
          for (t_x : 0 .. 1) {
            act_st = t_st; act_rev = t_r; act_result = A_HAS_RESULT(t_st);
            act_dec[0] = (t_r == 1 -> 1 : 0); act_dec_hash[0] = (t_r == 1 -> 1 : 0);
            act_dec[1] = 0; act_dec_hash[1] = 0;
            t_d = t_r + t_x;      /* the revision the caller read */
            t_i = t_h + 1;        /* the plan hash the caller holds */
            printf("cas "); p_astate(t_st); printf(" rev=%d ", t_r);
            if
            :: t_q == 0 -> printf("decide(H0,approved,pending_approval)"); rq_decide(t_i, t_d, 0, 1, A_PENDING)
            :: t_q == 1 -> printf("decide(H1,approved,pending_approval)"); rq_decide(t_i, t_d, 1, 1, A_PENDING)
            :: t_q == 2 -> printf("decide(H0,approved,approved)"); rq_decide(t_i, t_d, 0, 1, A_APPROVED)
            :: t_q == 3 -> printf("decide(H1,approved,approved)"); rq_decide(t_i, t_d, 1, 1, A_APPROVED)
            :: t_q == 4 -> printf("decide(H0,rejected,rejected)"); rq_decide(t_i, t_d, 0, 2, A_REJECTED)
            :: t_q == 5 -> printf("decide(H1,rejected,rejected)"); rq_decide(t_i, t_d, 1, 2, A_REJECTED)
            :: t_q == 6 -> printf("expire"); rq_expire(t_i, t_d)
            :: t_q == 7 -> printf("admit(planned)"); rq_same_rev(t_i, t_d, A_PLANNED, A_EXECUTING, 0)
            :: t_q == 8 -> printf("admit(approved)"); rq_same_rev(t_i, t_d, A_APPROVED, A_EXECUTING, 0)
            :: t_q == 9 -> printf("refuse(planned)"); rq_same_rev(t_i, t_d, A_PLANNED, A_FAILED, 1)
            :: t_q == 10 -> printf("refuse(approved)"); rq_same_rev(t_i, t_d, A_APPROVED, A_FAILED, 1)
            :: t_q == 11 -> printf("finish(completed)"); rq_same_rev(t_i, t_d, A_EXECUTING, A_COMPLETED, 1)
            :: t_q == 12 -> printf("finish(failed)"); rq_same_rev(t_i, t_d, A_EXECUTING, A_FAILED, 1)
            fi;
            printf(" hash=%d read_rev=%d -> ", t_i, t_d);
            act_cas(t_v);
            if
            :: t_v == CAS_OK -> printf("OK "); p_astate(act_st); printf(" rev=%d", act_rev)
            :: t_v == CAS_INVALID -> printf("INVALID")
            :: t_v == CAS_CONFLICT_HASH -> printf("CONFLICT_HASH")
            :: t_v == CAS_CONFLICT_STATE -> printf("CONFLICT_STATE")
            :: t_v == CAS_CONFLICT_REV -> printf("CONFLICT_REV")
            :: t_v == CAS_PRECONDITION -> printf("PRECONDITION")
            fi;
            printf("\n")
          }
        }
      }
    }
  }
  /* ---- Recorded approval (issue 20 item 4): Plan's initial state over every capability
   * floor x requester (human|agent) x automatic class eligible x session posture ---- */
  for (t_pf : 0 .. 3) {
    for (t_pa : 0 .. 1) {
      for (t_pe : 0 .. 1) {
        for (t_pp : 0 .. 1) {
          plan_state(t_pf, t_pa, t_pe, t_pp, t_ps);
          printf("plan floor="); p_floor(t_pf);
          printf(" requester=%d eligible=%d posture=%d -> ", t_pa, t_pe, t_pp);
          p_astate(t_ps); printf("\n")
        }
      }
    }
  }
}
