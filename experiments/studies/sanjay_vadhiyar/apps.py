"""The four applications of §5.2 as Eq. 1 models, at the problem sizes of Fig. 11.

The paper fitted MD, eigen, SSOR and IS on an 8-processor Pentium IV cluster on 100 Mbit/s
Ethernet but does not print the fitted equations, so these are ours: each takes its
application's textbook complexity and coefficients that give tens to hundreds of seconds on
a loaded cluster, as Table I's means do. What matters for the study is their shape:
- MD (replicated data): N^2 force work split over P; every step all-gathers N positions,
  a volume that does not shrink with P;
- eigen (dense, 10,000): N^3 work, communication shrinking as P/log P: highly scalable,
  as §5.3.4 says it is;
- SSOR (2-D blocks, 3328): N^2 work, halos of N/sqrt(P);
- IS (400,000 keys): N work, an all-to-all of N keys whose cost grows with log P.
"""
from __future__ import annotations

from experiments.models.sv_model import SvModel

MD = SvModel(application="md", problem_size_range=(256, 8192), f_comp="N^2", f_comm="N", f_cpu="x", f_bw="x",
             f_pcomp="P", f_pcomm="1", a_comp_s=5e-4, a_comm_s=2e-3)
EIGEN = SvModel(application="eigen", problem_size_range=(1000, 20000), f_comp="N^3", f_comm="N^2", f_cpu="x",
                f_bw="x", f_pcomp="P", f_pcomm="P/log P", a_comp_s=2e-9, a_comm_s=5e-6)
SSOR = SvModel(application="ssor", problem_size_range=(512, 8192), f_comp="N^2", f_comm="N", f_cpu="x", f_bw="x",
               f_pcomp="P", f_pcomm="sqrt P", a_comp_s=2e-4, a_comm_s=4e-3)
IS = SvModel(application="is", problem_size_range=(10_000, 1_000_000), f_comp="N", f_comm="N", f_cpu="x",
             f_bw="x", f_pcomp="P", f_pcomm="1/P", a_comp_s=2e-3, a_comm_s=2e-7)

#: Fig. 11's applications and problem sizes.
APPLICATIONS: dict[str, tuple[SvModel, float]] = {
    "MD": (MD, 2048), "eigen": (EIGEN, 10_000), "SSOR": (SSOR, 3328), "IS": (IS, 400_000),
}
