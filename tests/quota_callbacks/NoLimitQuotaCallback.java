package kquota.testing;

import java.util.Map;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.quota.ClientQuotaCallback;
import org.apache.kafka.server.quota.ClientQuotaEntity;
import org.apache.kafka.server.quota.ClientQuotaType;

/**
 * NoLimitQuotaCallback is the skeleton of kquota's test quota callbacks: it limits no client
 * and ignores the quotas it is told about, and says on standard output (the broker's log)
 * that it was configured, so a test can tell the broker loaded it. A subclass only chooses
 * how clients share metrics (here each client has none of its own).
 */
public abstract class NoLimitQuotaCallback implements ClientQuotaCallback {
    @Override
    public void configure(Map<String, ?> configs) {
        System.out.println(getClass().getSimpleName() + " configured");
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
