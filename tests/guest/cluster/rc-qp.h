/* SPDX-License-Identifier: MIT */
/*
 * rc-qp.h - the cluster programs' RC queue pair set-up (header only;
 * verbs-cache.c, rxe-gpu-test.c and gpu-rdma.c):
 *
 *   rc_qp_connect(qp, access, &dgid, sgid_index, dest_qpn, rq_psn, sq_psn,
 *                 &step)
 *       moves QP from RESET through INIT and RTR to RTS on rxe0's port 1:
 *       ACCESS its remote access flags, the peer the queue pair DEST_QPN
 *       at DGID (the queue pair's own number and GID for a loopback),
 *       reached through our GID SGID_INDEX, RQ_PSN the peer's first packet
 *       sequence number and SQ_PSN ours.  Returns 0, or -1 with errno set
 *       and STEP naming the state that could not be reached ("INIT",
 *       "RTR", "RTS").
 *
 * One outstanding RDMA READ or atomic each way, a 1024-byte path MTU,
 * hop limit 1 (the nodes share a link), and the retry counts at their
 * largest, so that a slow guest under TCG retries rather than fails.
 */
#ifndef RC_QP_H
#define RC_QP_H

#include <stdint.h>
#include <string.h>

#include <infiniband/verbs.h>

static inline int rc_qp_connect(struct ibv_qp *qp, int access,
				const union ibv_gid *dgid, int sgid_index,
				uint32_t dest_qpn, uint32_t rq_psn,
				uint32_t sq_psn, const char **step)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	*step = "INIT";
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = (uint8_t)sgid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	*step = "RTR";
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = sq_psn;
	a.max_rd_atomic = 1;
	*step = "RTS";
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) ? -1 : 0;
}

#endif
