package io.strimzi.kafka.quotas;

import java.util.Map;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.quota.ClientQuotaCallback;
import org.apache.kafka.server.quota.ClientQuotaEntity;
import org.apache.kafka.server.quota.ClientQuotaType;

/**
 * A stand-in written for kquota's tests under the class name Strimzi's quota plugin uses
 * (not Strimzi's code): like that plugin it ignores per-entity quotas and applies one
 * broker-wide limit, here none. kquota only needs a broker that names this class in
 * client.quota.callback.class, as a Strimzi-built broker running the plugin does.
 */
public final class StaticQuotaCallback implements ClientQuotaCallback {
    @Override
    public void configure(Map<String, ?> configs) {
        System.out.println("StaticQuotaCallback stand-in configured");
    }

    @Override
    public Map<String, String> quotaMetricTags(
            ClientQuotaType quotaType, KafkaPrincipal principal, String clientId) {
        return Map.of();
    }

    @Override
    public Double quotaLimit(ClientQuotaType quotaType, Map<String, String> metricTags) {
        return null;
    }

    @Override
    public void updateQuota(ClientQuotaType quotaType, ClientQuotaEntity entity, double value) {}

    @Override
    public void removeQuota(ClientQuotaType quotaType, ClientQuotaEntity entity) {}

    @Override
    public boolean quotaResetRequired(ClientQuotaType quotaType) {
        return false;
    }

    @Override
    public boolean updateClusterMetadata(Cluster cluster) {
        return false;
    }

    @Override
    public void close() {}
}
