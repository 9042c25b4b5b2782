"""Paper 003's volatility ("stability") classifier on the engine side: the 774 inputs
(:mod:`engines.volatility.features`), the exported net evaluated with numpy
(:mod:`engines.volatility.model`) and the iteration policies that stop deepening when the net
says the position is stable (:mod:`engines.volatility.policy`). Nothing here imports torch or
the warehouse.
"""
