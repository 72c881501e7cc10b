package io.strimzi.kafka.quotas;

import kquota.testing.NoLimitQuotaCallback;

/**
 * A stand-in written for kquota's tests under the class name Strimzi's quota plugin uses
 * (not Strimzi's code): like that plugin it ignores per-entity quotas and applies one
 * broker-wide limit, here none. kquota only needs a broker that names this class in
 * client.quota.callback.class, as a Strimzi-built broker running the plugin does.
 */
public final class StaticQuotaCallback extends NoLimitQuotaCallback {}
