"""The git-native loop: the hook -- what a commit stages, the ledgers it governs, their turns
run and their gate -- and a person's decision and the drift review it starts."""
