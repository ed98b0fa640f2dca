// AutomationTimeline drives parameters: the conformance that plugs it into AudioParameter.
extension AutomationTimeline: ParameterAutomation {}
