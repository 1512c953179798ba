/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The names of affinityd's D-Bus API, version 1 (docs/org.affinityd1.xml): the bus name the
 * daemon owns, its objects and interfaces, and the errors its methods return. One definition
 * for the daemon, affinityctl and the tests. A change that breaks clients takes a new version
 * in every name (org.affinityd2); until then these never change.
 */

#define AFFINITYD_BUS_NAME      "org.affinityd1"
#define AFFINITYD_BUS_PATH      "/org/affinityd1"
#define AFFINITYD_BUS_INTERFACE "org.affinityd1.Manager"

/* One object per policy: AFFINITYD_POLICY_PATH_PREFIX/NAME, NAME escaped with
 * sd_bus_path_encode(). */
#define AFFINITYD_POLICY_PATH_PREFIX "/org/affinityd1/policy"
#define AFFINITYD_POLICY_INTERFACE   "org.affinityd1.Policy"

#define AFFINITYD_ERROR_INVALID_POLICY  "org.affinityd1.Error.InvalidPolicy"
#define AFFINITYD_ERROR_NO_SUCH_PROCESS "org.affinityd1.Error.NoSuchProcess"
#define AFFINITYD_ERROR_NOT_SUPPORTED   "org.affinityd1.Error.NotSupported"
#define AFFINITYD_ERROR_BUSY            "org.affinityd1.Error.Busy"
