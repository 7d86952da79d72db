# SPDX-License-Identifier: GPL-2.0
"""The lab's scenarios, one module each. Each adds itself to the registry
(rxecc_lab.registry) with the topologies it reports on: importing this
package registers them all."""
from . import collective, ecmp, incast, pathology

MODULES = (incast, pathology, ecmp, collective)
