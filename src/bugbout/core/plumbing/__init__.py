"""The plumbing the stages share: git, checkouts, patches, processes, test runs,
environments, confinement."""
