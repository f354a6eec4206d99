"""Getting a repository and a machine ready for a bout: what ``bugbout init`` finds and
writes (:mod:`~bugbout.onboarding.init`), what ``bugbout doctor`` checks
(:mod:`~bugbout.onboarding.doctor`) and what a bout checks before it spends
(:mod:`~bugbout.onboarding.readiness`)."""
