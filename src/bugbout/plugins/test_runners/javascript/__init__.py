"""JavaScript and TypeScript test runners: what a test file is (:mod:`.files`) and the
tests it defines (:mod:`.titles`), shared by the runners of this package."""
