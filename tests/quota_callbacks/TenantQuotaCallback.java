package kquota.testing;

import java.util.Map;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.quota.ClientQuotaType;

/**
 * TenantQuotaCallback is the smallest custom quota callback: every client shares one metric
 * and none is limited. Its only job in kquota's tests is to be a broker's
 * client.quota.callback.class, so that kquota can be shown to notice one.
 */
public final class TenantQuotaCallback extends NoLimitQuotaCallback {
    @Override
    public Map<String, String> quotaMetricTags(
            ClientQuotaType quotaType, KafkaPrincipal principal, String clientId) {
        return Map.of("tenant", "all");
    }
}
