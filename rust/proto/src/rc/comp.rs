// SPDX-License-Identifier: GPL-2.0
//! The completer: what an acknowledgement's syndrome and the retransmit timer do to the
//! send queue (rxe's `check_ack` and its `COMPST_ERROR_RETRY` / `COMPST_RNR_RETRY`
//! states). READ responses and atomic acknowledgements are placed by
//! [`Requester::read_resp`] and [`Requester::atomic_resp`]; the completion of SENDs and
//! WRITEs an ACK covers by [`Requester::acked_head`] and [`Requester::ack_done`].

use super::super::exthdr::{NakCode, Syndrome};
use super::super::uapi::wc_status;
use super::req::Requester;
use super::rnr_timer_us;

/// What an acknowledgement's AETH syndrome asks of the requester.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A positive acknowledgement (or a response carrying one): go on.
    Ack,
    /// RNR NAK with retries left: complete what came before its PSN, go back to it and
    /// send nothing for `us` microseconds.
    RnrWait {
        /// The responder's RNR timer.
        us: u64,
    },
    /// PSN sequence error NAK: complete what came before its PSN and go back to it.
    GoBack,
    /// The WQE at the NAK's PSN fails with this completion status (after completing
    /// what came before it), and the QP moves to the error state. An RNR NAK with no
    /// retry left fails with `RNR_RETRY_EXC_ERR` and completes nothing first.
    Fail {
        /// Work completion status.
        status: u32,
        /// Complete the WQEs before the NAK's PSN first.
        ack_first: bool,
    },
    /// A reserved syndrome: the packet is malformed and dropped.
    Malformed,
}

/// What the retransmit timer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// An RNR wait ended: send again.
    RnrDone,
    /// Nothing is outstanding.
    Idle,
    /// Requests are outstanding and nothing was heard for the timeout.
    Expired,
}

impl Requester {
    /// Classifies an AETH `syndrome`, spending an RNR retry for an RNR NAK.
    pub fn on_syndrome(&mut self, syndrome: Syndrome) -> Reply {
        match syndrome {
            Syndrome::Ack(_) => Reply::Ack,
            Syndrome::Rnr(code) => {
                if self.rnr.spend() {
                    Reply::RnrWait {
                        us: rnr_timer_us(code),
                    }
                } else {
                    Reply::Fail {
                        status: wc_status::RNR_RETRY_EXC_ERR,
                        ack_first: false,
                    }
                }
            }
            Syndrome::Nak(NakCode::PsnSeqErr) => Reply::GoBack,
            Syndrome::Nak(code) => Reply::Fail {
                status: match code {
                    NakCode::InvalidRequest => wc_status::REM_INV_REQ_ERR,
                    NakCode::RemoteAccessErr => wc_status::REM_ACCESS_ERR,
                    _ => wc_status::REM_OP_ERR,
                },
                ack_first: true,
            },
            Syndrome::Reserved(_) => Reply::Malformed,
        }
    }

    /// The peer answered (any valid response): both retry budgets are full again.
    pub fn answered(&mut self) {
        self.retry.refill();
        self.rnr.refill();
    }

    /// The retransmit timer fired.
    pub fn timer(&mut self) -> Timer {
        if self.rnr_wait {
            self.rnr_wait = false;
            Timer::RnrDone
        } else if self.idle() {
            Timer::Idle
        } else {
            Timer::Expired
        }
    }

    /// A transport timeout: `true` if a retry is left (go back to the completer's PSN),
    /// `false` if the WQE fails with `RETRY_EXC_ERR`.
    pub fn timed_out(&mut self) -> bool {
        self.retry.spend()
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::psn::Psn;
    use super::super::Retry;
    use super::*;

    #[test]
    fn syndromes() {
        let mut rq = Requester::new(Psn::new(0));
        rq.rnr = Retry::rnr(1);
        assert_eq!(rq.on_syndrome(Syndrome::Ack(3)), Reply::Ack);
        assert_eq!(rq.on_syndrome(Syndrome::Rnr(1)), Reply::RnrWait { us: 10 });
        let exc = Reply::Fail {
            status: wc_status::RNR_RETRY_EXC_ERR,
            ack_first: false,
        };
        assert_eq!(rq.on_syndrome(Syndrome::Rnr(1)), exc);
        rq.answered();
        assert_eq!(
            rq.on_syndrome(Syndrome::Rnr(0)),
            Reply::RnrWait { us: 655_360 }
        );
        assert_eq!(
            rq.on_syndrome(Syndrome::Nak(NakCode::PsnSeqErr)),
            Reply::GoBack
        );
        let fail = |status| Reply::Fail {
            status,
            ack_first: true,
        };
        assert_eq!(
            rq.on_syndrome(Syndrome::Nak(NakCode::RemoteAccessErr)),
            fail(wc_status::REM_ACCESS_ERR)
        );
        assert_eq!(
            rq.on_syndrome(Syndrome::Nak(NakCode::InvalidRequest)),
            fail(wc_status::REM_INV_REQ_ERR)
        );
        assert_eq!(
            rq.on_syndrome(Syndrome::Nak(NakCode::RemoteOpErr)),
            fail(wc_status::REM_OP_ERR)
        );
        assert_eq!(rq.on_syndrome(Syndrome::Reserved(0x40)), Reply::Malformed);
    }

    #[test]
    fn timer() {
        let mut rq = Requester::new(Psn::new(5));
        assert_eq!(rq.timer(), Timer::Idle);
        rq.rnr_wait = true;
        assert_eq!(rq.timer(), Timer::RnrDone);
        assert!(!rq.rnr_wait);
        rq.req_psn = Psn::new(6);
        assert_eq!(rq.timer(), Timer::Expired);
        rq.retry = Retry::new(1);
        assert!(rq.timed_out());
        assert!(!rq.timed_out());
        rq.answered();
        assert!(rq.timed_out());
    }
}
